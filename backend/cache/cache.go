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

// LRU is a fixed-capacity map safe for concurrent use.
type LRU[K comparable, V any] struct {
	mu    sync.Mutex
	cap   int
	order *list.List // front: most recently used; elements hold *entry[K, V]
	items map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// New makes a cache of at most capacity entries (at least one).
func New[K comparable, V any](capacity int) *LRU[K, V] {
	return &LRU[K, V]{cap: max(capacity, 1), order: list.New(), items: map[K]*list.Element{}}
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
	c.items[k] = c.order.PushFront(&entry[K, V]{k, v})
	for c.order.Len() > c.cap {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(*entry[K, V]).key)
	}
	return v
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
