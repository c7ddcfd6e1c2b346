package checkpoint

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SavepointVersion is the version of the savepoint format this build writes. It reads
// every version up to it; a later one is refused by name.
const SavepointVersion = 1

// Savepoint is the metadata of a savepoint: a consistent image of a job, taken when the
// user asks and owned by the user. It is a directory holding a _metadata file, written
// last and with a checksum, and the files it lists (keyed state, and copies of the
// job's source and sink files), named relative to the directory, so it can be moved or
// copied anywhere and restores the same. Keyed state is stored by key group, in key
// order, independent of the state store's layout and of the job's parallelism.
type Savepoint struct {
	Version     int
	Job         string
	Checkpoint  int64 // the id of the checkpoint it was taken as
	Taken       time.Time
	Parallelism string // tasks per stage when it was taken, as "2,2,1"
	Operators   []SavedOperator
	Files       []SavedFile
	// Checksum is the SHA-256 of this metadata encoded with Checksum empty.
	Checksum string
}

// SavedOperator is the state of one stateful operator, or of one source or sink.
type SavedOperator struct {
	UID     string   // what its state means: the operator it restores into has the same
	Kind    string   // source, sink, aggregate, join, rank, watermark, values, result
	Meaning []string `json:",omitempty"` // what decides its state, for reports
	// Handles is what each of its tasks snapshotted, in task order: source positions,
	// sink transactions, a keyed operator's watermark.
	Handles [][]byte
	Keyed   string `json:",omitempty"` // the file of its keyed state, if any
	Keys    int64  `json:",omitempty"`
	Bytes   int64  `json:",omitempty"` // of its keyed state and handles
}

// SavedFile is a file of a savepoint, by its path relative to the savepoint directory.
type SavedFile struct {
	Path   string // slash-separated
	Size   int64
	SHA256 string
}

// MetadataName is the name of a savepoint's metadata file.
const MetadataName = metadataFile

// ErrIncomplete says a savepoint directory has no metadata: taking it was cut short.
var ErrIncomplete = errors.New("not a complete savepoint")

// SavepointWriter writes a savepoint into its directory; Finish writes its metadata,
// which makes it a savepoint.
type SavepointWriter struct {
	Dir   string
	files []SavedFile
}

// CreateSavepoint creates the directory dir, which must not exist, for a savepoint.
func CreateSavepoint(dir string) (*SavepointWriter, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	return &SavepointWriter{Dir: dir}, nil
}

// Create returns a file of the savepoint to write, at rel; its Close syncs it and
// records its size and checksum.
func (w *SavepointWriter) Create(rel string) (*SavedFileWriter, error) {
	path := filepath.Join(w.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	fw := &SavedFileWriter{w: w, f: f, rel: rel, sum: sha256.New()}
	fw.buf = bufio.NewWriterSize(io.MultiWriter(f, fw.sum), 256<<10)
	return fw, nil
}

// Copy copies the file at src into the savepoint, at rel.
func (w *SavepointWriter) Copy(rel, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := w.Create(rel)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.f.Close()
		return err
	}
	return out.Close()
}

// Finish completes the savepoint: its metadata (sp, with the files written) is written
// under a temporary name, synced, and renamed into place.
func (w *SavepointWriter) Finish(sp *Savepoint) error {
	sp.Version = SavepointVersion
	return w.finishAs(sp)
}

func (w *SavepointWriter) finishAs(sp *Savepoint) error {
	sp.Files = w.files
	sp.Checksum = ""
	data, err := json.MarshalIndent(sp, "", "  ")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	sp.Checksum = hex.EncodeToString(sum[:])
	if data, err = json.MarshalIndent(sp, "", "  "); err != nil {
		return err
	}
	tmp := filepath.Join(w.Dir, MetadataName+".tmp")
	if err := writeSynced(tmp, data); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(w.Dir, MetadataName)); err != nil {
		return err
	}
	return syncDir(w.Dir)
}

// SavedFileWriter is a file being written into a savepoint.
type SavedFileWriter struct {
	w    *SavepointWriter
	f    *os.File
	buf  *bufio.Writer
	sum  hash.Hash
	rel  string
	size int64
}

func (fw *SavedFileWriter) Write(p []byte) (int, error) {
	n, err := fw.buf.Write(p)
	fw.size += int64(n)
	return n, err
}

// Close flushes and syncs the file and records it in the savepoint.
func (fw *SavedFileWriter) Close() error {
	err := errors.Join(fw.buf.Flush(), fw.f.Sync(), fw.f.Close())
	if err == nil {
		fw.w.files = append(fw.w.files, SavedFile{Path: fw.rel, Size: fw.size, SHA256: hex.EncodeToString(fw.sum.Sum(nil))})
	}
	return err
}

// ReadSavepoint reads the savepoint at path (its directory, or its _metadata file) and
// checks it whole: the metadata's checksum and version, and the size and checksum of
// every file it lists. It returns the savepoint's directory too.
func ReadSavepoint(path string) (*Savepoint, string, error) {
	dir := path
	if filepath.Base(path) == MetadataName {
		dir = filepath.Dir(path)
	}
	data, err := os.ReadFile(filepath.Join(dir, MetadataName))
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, dir, fmt.Errorf("savepoint %s: %w", path, serr)
		}
		return nil, dir, fmt.Errorf("savepoint %s: %w: it has no %s (taking it was cut short, or this is not a savepoint directory)", path, ErrIncomplete, MetadataName)
	}
	if err != nil {
		return nil, dir, fmt.Errorf("savepoint %s: %w", path, err)
	}
	sp := &Savepoint{}
	if err := json.Unmarshal(data, sp); err != nil {
		return nil, dir, fmt.Errorf("savepoint %s: %w: %s does not decode: %v", path, ErrDamaged, MetadataName, err)
	}
	want := sp.Checksum
	sp.Checksum = ""
	again, _ := json.MarshalIndent(sp, "", "  ")
	sum := sha256.Sum256(again)
	if hex.EncodeToString(sum[:]) != want {
		return nil, dir, fmt.Errorf("savepoint %s: %w: the checksum of %s does not match", path, ErrDamaged, MetadataName)
	}
	sp.Checksum = want
	if sp.Version < 1 || sp.Version > SavepointVersion {
		return nil, dir, fmt.Errorf("savepoint %s is of format version %d; this build reads versions 1 to %d", path, sp.Version, SavepointVersion)
	}
	for _, f := range sp.Files {
		if err := checkFile(dir, f); err != nil {
			return nil, dir, fmt.Errorf("savepoint %s: %w: %v", path, ErrDamaged, err)
		}
	}
	return sp, dir, nil
}

func checkFile(dir string, f SavedFile) error {
	if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
		return fmt.Errorf("file %q lies outside the savepoint", f.Path)
	}
	in, err := os.Open(filepath.Join(dir, filepath.FromSlash(f.Path)))
	if err != nil {
		return err
	}
	defer in.Close()
	h := sha256.New()
	n, err := io.Copy(h, in)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return fmt.Errorf("%s is not the file it wrote (%d bytes, %d expected, or another checksum)", f.Path, n, f.Size)
	}
	return nil
}

// Under lists the savepoint's files whose path begins with prefix + "/", and their
// paths after it.
func (sp *Savepoint) Under(prefix string) []SavedFile {
	var out []SavedFile
	for _, f := range sp.Files {
		if rest, ok := strings.CutPrefix(f.Path, prefix+"/"); ok {
			out = append(out, SavedFile{Path: rest, Size: f.Size, SHA256: f.SHA256})
		}
	}
	return out
}

// WriteKV appends one key and its value to a keyed state file.
func WriteKV(w io.Writer, key, value []byte) error {
	var head [2 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(head[:], uint64(len(key)))
	n += binary.PutUvarint(head[n:], uint64(len(value)))
	if _, err := w.Write(head[:n]); err != nil {
		return err
	}
	if _, err := w.Write(key); err != nil {
		return err
	}
	_, err := w.Write(value)
	return err
}

// ReadKV calls fn for each key and value of a keyed state file, in file order. The
// slices are valid during the call only.
func ReadKV(r io.Reader, fn func(key, value []byte) error) error {
	br := bufio.NewReaderSize(r, 256<<10)
	var buf []byte
	for {
		klen, err := binary.ReadUvarint(br)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: keyed state: %v", ErrDamaged, err)
		}
		vlen, err := binary.ReadUvarint(br)
		if err != nil || klen > 1<<30 || vlen > 1<<30 {
			return fmt.Errorf("%w: keyed state record", ErrDamaged)
		}
		need := int(klen + vlen)
		if cap(buf) >= need {
			buf = buf[:need]
			_, err = io.ReadFull(br, buf)
		} else {
			// Grown as the bytes arrive: a damaged length allocates no more than the file holds.
			buf, err = io.ReadAll(io.LimitReader(br, int64(need)))
		}
		if err != nil || len(buf) != need {
			return fmt.Errorf("%w: keyed state record cut short", ErrDamaged)
		}
		if err := fn(buf[:klen], buf[klen:]); err != nil {
			return err
		}
	}
}
