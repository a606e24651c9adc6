package a

import (
	"archive/tar"
	"archive/zip"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// The classic: one function reads the entry and writes it.
func unzip(r *zip.Reader, dest string) error {
	for _, f := range r.File {
		path := filepath.Join(dest, f.Name) // want `archive entry's name \(zip.FileHeader.Name\) is joined into a file path`
		out, err := os.Create(path)
		if err != nil {
			return err
		}
		out.Close()
	}
	return nil
}

// Checked with a prefix test on the joined path.
func unzipChecked(r *zip.Reader, dest string) error {
	for _, f := range r.File {
		path := filepath.Join(dest, f.Name)
		if !strings.HasPrefix(path, filepath.Clean(dest)+string(os.PathSeparator)) {
			return fmt.Errorf("illegal file path: %s", path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Checked with IsLocal on the name.
func unzipLocal(r *zip.Reader, dest string) error {
	for _, f := range r.File {
		if !filepath.IsLocal(f.Name) {
			continue
		}
		if _, err := os.Create(filepath.Join(dest, f.Name)); err != nil {
			return err
		}
	}
	return nil
}

// Only the base name is used.
func unzipBase(r *zip.Reader, dest string) error {
	for _, f := range r.File {
		if _, err := os.Create(filepath.Join(dest, filepath.Base(f.Name))); err != nil {
			return err
		}
	}
	return nil
}

// Listing entries writes nothing.
func list(r *zip.Reader, dest string) []string {
	var out []string
	for _, f := range r.File {
		out = append(out, filepath.Join(dest, f.Name))
	}
	return out
}

// File is an archive entry of any format, as extraction libraries have it.
type File struct {
	io.ReadCloser
	Header any
}

type Tar struct{ r *tar.Reader }

func (t *Tar) read() (File, error) {
	h, err := t.r.Next()
	if err != nil {
		return File{}, err
	}
	return File{ReadCloser: io.NopCloser(t.r), Header: h}, nil
}

// The check lives in the caller, the join in the callee, the write in a
// helper: the shape of mholt/archiver.
func (t *Tar) untarNext(destination string) error {
	f, err := t.read()
	if err != nil {
		return err
	}
	header, ok := f.Header.(*tar.Header)
	if !ok {
		return fmt.Errorf("unexpected header %T", f.Header)
	}
	if err := t.CheckPath(destination, header.Name); err != nil {
		return err
	}
	return t.untarFile(f, destination, header)
}

func (t *Tar) untarFile(f File, destination string, hdr *tar.Header) error {
	to := filepath.Join(destination, hdr.Name)
	return writeNewFile(to, f)
}

// CheckPath refuses a name that leaves to.
func (*Tar) CheckPath(to, filename string) error {
	to, _ = filepath.Abs(to)
	dest := filepath.Join(to, filename)
	if !strings.HasPrefix(dest, to) {
		return fmt.Errorf("illegal file path: %s", filename)
	}
	return nil
}

func writeNewFile(fpath string, in io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(fpath), 0o755); err != nil {
		return err
	}
	out, err := os.Create(fpath)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = io.Copy(out, in)
	return err
}

// The same shape with the check forgotten.
type Zip struct{ files []*zip.File }

func (z *Zip) extractNext(to string, i int) error {
	f := File{Header: z.files[i].FileHeader}
	return z.extractFile(f, to)
}

func (z *Zip) extractFile(f File, to string) error {
	header, ok := f.Header.(zip.FileHeader)
	if !ok {
		return fmt.Errorf("unexpected header %T", f.Header)
	}
	to = filepath.Join(to, header.Name) // want `archive entry's name \(zip.FileHeader.Name\)`
	return writeNewFile(to, f)
}

// A helper joins; the name enters the path at the call.
func extractTo(dest string, h *tar.Header, r io.Reader) error {
	return writeEntry(dest, h.Name, r) // want `archive entry's name \(tar.Header.Name\)`
}

func writeEntry(dest, name string, r io.Reader) error {
	return writeNewFile(filepath.Join(dest, name), r)
}

// A helper checks: fine.
func extractChecked(dest string, h *tar.Header, r io.Reader) error {
	return writeChecked(dest, h.Name, r)
}

func writeChecked(dest, name string, r io.Reader) error {
	if containsDotDot(name) {
		return fmt.Errorf("path traversal in %q", name)
	}
	return writeNewFile(filepath.Join(dest, name), r)
}

func containsDotDot(v string) bool {
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return true
		}
	}
	return false
}

// A request's query names the file to serve.
func serve(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("file")
	http.ServeFile(w, r, filepath.Join("/srv/files", name)) // want `a URL query value \(url.Values.Get\) is joined into a file path with no check for "..": a crafted URL`
}

type request struct{ Dst string }

// The go-getter shape: the joined path is kept for the download.
func destination(req *request, u *url.URL) {
	q := u.Query()
	if v := q.Get("filename"); v != "" {
		req.Dst = filepath.Join(req.Dst, v) // want `a URL query value`
	}
}

func destinationChecked(req *request, u *url.URL) error {
	q := u.Query()
	if v := q.Get("filename"); v != "" {
		if containsDotDot(v) {
			return fmt.Errorf("filename query parameter contains path traversal")
		}
		req.Dst = filepath.Join(req.Dst, v)
	}
	return nil
}
