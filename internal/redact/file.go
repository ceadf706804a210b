package redact

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// MaskFile masks a file mcpspec keeps, such as a server's stderr log, in place: it is copied
// through a [Writer] into a temporary file beside it, which then replaces it (a reader never
// sees half of it). With a masker that holds no secret the file is left untouched; a missing
// file is no error. Only a regular file is rewritten.
func MaskFile(path string, m *Masker) error {
	if m.snapshot() == nil {
		return nil
	}
	st, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("mask %s: not a regular file", path)
	}
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	w := NewWriter(tmp, m)
	_, err = io.Copy(w, in)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Chmod(st.Mode().Perm())
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	return nil
}
