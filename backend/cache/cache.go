// Package cache is the one bounded cache every program cache uses (the
// drivers' executables, the frontends' lowered programs): a long training
// run whose shapes keep changing compiles without end, and an unbounded map
// would grow memory with it. Least recently used entries go first.
package cache

import (
	"container/list"
	"sync"
)

// ExecutableCacheSize bounds the compiled programs a driver keeps: enough for
// every op of a large model at a few shapes each; the least recently used
// is compiled again when it comes back.
const ExecutableCacheSize = 4096

// ExecutableCacheInstructions bounds the instructions of the compiled
// programs a driver keeps, what their memory grows with: a compiled
// program costs 2 to 3 KiB per instruction here (jax's random draws, about
// 550 instructions each, cost 1.1 MiB on the host driver and 1.6 MiB on
// the MPSGraph model), so a count alone let 4096 large programs hold
// gigabytes (jax's test suite, which compiles thousands of distinct
// programs, had workers killed for memory). With 2^18, a process that
// compiles such programs without end levels off at about 470 of them and
// 1.1 GiB resident on the model (split execution's cache and the driver's
// together), where it grew by 1.6 MiB a program before; a training step's
// programs fit many times over (MobileNetV2's clustered step is 56).
const ExecutableCacheInstructions = 1 << 18

// LRU is a bounded map safe for concurrent use: at most cap entries, and,
// when it weighs them, at most budget in total weight.
type LRU[K comparable, V any] struct {
	mu     sync.Mutex
	cap    int
	order  *list.List // front: most recently used; elements hold *entry[K, V]
	items  map[K]*list.Element
	weight func(V) int64 // nil: entries weigh nothing
	budget int64
	total  int64
}

type entry[K comparable, V any] struct {
	key K
	val V
	w   int64
}

// New makes a cache of at most capacity entries (at least one).
func New[K comparable, V any](capacity int) *LRU[K, V] {
	return &LRU[K, V]{cap: max(capacity, 1), order: list.New(), items: map[K]*list.Element{}}
}

// NewWeighted makes a cache of at most capacity entries whose weights sum
// to at most budget; the newest entry stays even when it alone weighs more.
func NewWeighted[K comparable, V any](capacity int, budget int64, weight func(V) int64) *LRU[K, V] {
	c := New[K, V](capacity)
	c.weight, c.budget = weight, budget
	return c
}

// Get returns the value for k and marks it used.
func (c *LRU[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*entry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// Add stores v for k unless k is already present, and returns what the
// cache holds for k: callers that built v outside the lock keep one value
// per key. The least recently used entry goes when the cache is full.
func (c *LRU[K, V]) Add(k K, v V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*entry[K, V]).val
	}
	e := &entry[K, V]{key: k, val: v}
	if c.weight != nil {
		e.w = max(c.weight(v), 0)
	}
	c.items[k] = c.order.PushFront(e)
	c.total += e.w
	for c.order.Len() > c.cap || (c.total > c.budget && c.weight != nil && c.order.Len() > 1) {
		old := c.order.Back()
		c.order.Remove(old)
		gone := old.Value.(*entry[K, V])
		delete(c.items, gone.key)
		c.total -= gone.w
	}
	return v
}

// Weight is the entries' total weight.
func (c *LRU[K, V]) Weight() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Len is the number of entries.
func (c *LRU[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Cap is the capacity.
func (c *LRU[K, V]) Cap() int { return c.cap }

// Bytes is an LRU keyed by byte strings whose lookups do not allocate: the
// kernel glue builds each call's signature in a stack buffer and looks it up
// on every call.
type Bytes[V any] struct{ l *LRU[string, V] }

// NewBytes makes a Bytes cache of at most capacity entries.
func NewBytes[V any](capacity int) Bytes[V] { return Bytes[V]{New[string, V](capacity)} }

// Get returns the value for k and marks it used.
func (c Bytes[V]) Get(k []byte) (V, bool) {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	if el, ok := c.l.items[string(k)]; ok { // no allocation: the compiler indexes by the bytes
		c.l.order.MoveToFront(el)
		return el.Value.(*entry[string, V]).val, true
	}
	var zero V
	return zero, false
}

// Add is LRU.Add with the key copied.
func (c Bytes[V]) Add(k []byte, v V) V { return c.l.Add(string(k), v) }

// Len is the number of entries.
func (c Bytes[V]) Len() int { return c.l.Len() }
