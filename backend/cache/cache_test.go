package cache

import (
	"sync"
	"testing"
)

func TestBoundedLeastRecentlyUsedFirst(t *testing.T) {
	c := New[int, string](3)
	for i := range 3 {
		c.Add(i, string(rune('a'+i)))
	}
	c.Get(0) // 1 is now the least recently used
	c.Add(3, "d")
	if _, ok := c.Get(1); ok {
		t.Error("the least recently used entry was kept")
	}
	for _, k := range []int{0, 2, 3} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("entry %d was dropped", k)
		}
	}
	if c.Len() != 3 {
		t.Errorf("Len = %d, want 3", c.Len())
	}
	if got := c.Add(2, "other"); got != "c" {
		t.Errorf("Add of a present key returned %q, want the held \"c\"", got)
	}
}

// TestStaysBoundedUnderChurn: a training run whose shapes never repeat.
func TestStaysBoundedUnderChurn(t *testing.T) {
	c := New[int, []byte](64)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10000 {
				k := g*100000 + i
				c.Add(k, make([]byte, 16))
				c.Get(k - 1)
			}
		}()
	}
	wg.Wait()
	if c.Len() != 64 || len(c.items) != 64 {
		t.Fatalf("after 40000 distinct keys the cache holds %d (map %d), want its capacity 64", c.Len(), len(c.items))
	}
}

func TestBytesLookupsDoNotAllocate(t *testing.T) {
	c := NewBytes[int](2)
	key := []byte("float32[2,3];float32[3,4];")
	c.Add(key, 7)
	if v, ok := c.Get(key); !ok || v != 7 {
		t.Fatalf("Get = %v, %v", v, ok)
	}
	if n := testing.AllocsPerRun(100, func() { c.Get(key) }); n != 0 {
		t.Errorf("a lookup allocates %v times", n)
	}
	c.Add([]byte("a"), 1)
	c.Add([]byte("b"), 2)
	if _, ok := c.Get(key); ok || c.Len() != 2 {
		t.Errorf("the cache of 2 kept the oldest of 3 (len %d)", c.Len())
	}
}

// TestWeightBound: entries go, least recently used first, once their
// weights pass the budget, however few they are; one entry heavier than
// the whole budget is kept (it is in use) until the next comes.
func TestWeightBound(t *testing.T) {
	c := NewWeighted[int, int](100, 10, func(w int) int64 { return int64(w) })
	c.Add(1, 4)
	c.Add(2, 4)
	c.Get(1) // 2 is now the least recently used
	c.Add(3, 4)
	if _, ok := c.Get(2); ok {
		t.Error("the least recently used entry was kept past the weight budget")
	}
	if c.Len() != 2 || c.Weight() != 8 {
		t.Errorf("Len %d, Weight %d; want 2 entries weighing 8", c.Len(), c.Weight())
	}
	c.Add(4, 50)
	if c.Len() != 1 || c.Weight() != 50 {
		t.Errorf("after one entry over the budget: Len %d, Weight %d; want it alone, 50", c.Len(), c.Weight())
	}
	if _, ok := c.Get(4); !ok {
		t.Error("the entry over the budget was dropped at once")
	}
	c.Add(5, 1)
	if c.Len() != 1 || c.Weight() != 1 {
		t.Errorf("Len %d, Weight %d after a light entry; want the heavy one gone", c.Len(), c.Weight())
	}
}
