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
