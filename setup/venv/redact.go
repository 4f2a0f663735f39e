package venv

import (
	"bytes"
	"os"
	"path/filepath"
)

// RedactHome replaces the user's home directory in data with "~", so that
// reports committed to the repository carry no machine's paths.
func RedactHome(data []byte) []byte {
	home, err := os.UserHomeDir()
	if err != nil || len(home) < 2 {
		return data
	}
	return bytes.ReplaceAll(data, []byte(home+"/"), []byte("~/"))
}

// RedactPaths is RedactHome that also writes paths under root (a source
// tree) relative to it.
func RedactPaths(data []byte, root string) []byte {
	if abs, err := filepath.Abs(root); err == nil && len(abs) > 1 {
		data = bytes.ReplaceAll(data, []byte(abs+"/"), nil)
	}
	return RedactHome(data)
}
