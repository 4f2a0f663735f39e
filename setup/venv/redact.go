package venv

import (
	"bytes"
	"os"
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
