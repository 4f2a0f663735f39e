package matrix

import (
	"io/fs"
	"path/filepath"
	"syscall"
)

// diskUsage is what du -s reports for dir, in bytes: the blocks allocated,
// not the file sizes (a venv is mostly shared libraries, where they differ
// little, but the number should be du's), each hard-linked file once, and
// symlinks as links.
func diskUsage(dir string) (int64, error) {
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			total += info.Size()
			return nil
		}
		k := inode{uint64(st.Dev), uint64(st.Ino)}
		if seen[k] {
			return nil
		}
		seen[k] = true
		total += int64(st.Blocks) * 512
		return nil
	})
	return total, err
}
