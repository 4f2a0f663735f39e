package venv

import "testing"

func TestRedactHome(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	got := string(RedactHome([]byte(`{"python": "/home/someone/.cache/v/bin/python", "other": "/home/someoneelse/x"}`)))
	want := `{"python": "~/.cache/v/bin/python", "other": "/home/someoneelse/x"}`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestRedactPaths(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	got := string(RedactPaths([]byte(`"/src/tree/build/lib.so" "/home/someone/x"`), "/src/tree"))
	if want := `"build/lib.so" "~/x"`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
