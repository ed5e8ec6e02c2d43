package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

// Writer writes the configuration folder.
type Writer struct {
	// Out gets a line per file (wrote, unchanged, removed) and what
	// happened to the certificates and etcd.
	Out io.Writer
	// Rel shows a path to the user (relative to the working directory).
	Rel func(path string) string
	// Force issues new certificates even if those of an earlier run fit.
	Force bool
	// Now is the time certificates are checked and issued at.
	Now time.Time
}

// Write renders the configuration of d into dir, all or nothing: every file
// is written (private ones 0600) and the files of an earlier run that are no
// longer part of it removed in one transaction, rolled back on failure. An
// earlier run's certificates are kept while they fit; an earlier run's etcd
// membership must not change.
func (w Writer) Write(dir string, d *Options) error {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return fmt.Errorf("--output %s is a file: give a folder", w.Rel(dir))
	}
	if err := keepsEtcdMembership(dir, d); err != nil {
		return err
	}
	hadEtcd := false
	if b, err := os.ReadFile(filepath.Join(dir, EtcdFile)); err == nil && bytes.HasPrefix(b, []byte(Header)) {
		hadEtcd = true
	}
	certs, note, err := w.certificates(dir, d)
	if err != nil {
		return err
	}
	rendered, err := Render(d, certs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tx := &files.Transaction{}
	if err := w.writeFiles(tx, dir, rendered); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("putting the folder back: %w", rerr))
		}
		return err
	}
	fmt.Fprintln(w.Out, note)
	switch {
	case d.DatastoreSecret != "":
		fmt.Fprintf(w.Out, "storage: a SQL database through kine, --datastore-endpoint from key %q of the Secret %s/%s (create it before applying: docs/deploy.md); no etcd.\n",
			DatastoreEndpointKey, d.Namespace, d.DatastoreSecret)
		if hadEtcd {
			fmt.Fprintf(w.Out, "note: kubectl apply -k leaves the etcd StatefulSet of the earlier configuration running with its data: move the data to the database first, then delete it.\n")
		}
	case d.etcd():
		fmt.Fprintf(w.Out, "etcd: a StatefulSet running %s (the etcd version in go.mod), TLS with client certificates.\n", d.EtcdImage)
	default:
		fmt.Fprintf(w.Out, "etcd: external, %s (no StatefulSet).\n", strings.Join(d.EtcdServers, ","))
	}
	return nil
}

// writeFiles writes the folder's files and removes those an earlier run
// wrote (they start with Header) that are no longer part of it.
func (w Writer) writeFiles(tx *files.Transaction, dir string, rendered []File) error {
	var names []string
	for _, f := range rendered {
		names = append(names, f.Name)
		mode := os.FileMode(0o644)
		if f.Private {
			mode = 0o600
		}
		path := filepath.Join(dir, f.Name)
		unchanged := tx.Unchanged
		if err := tx.Write(files.File{Path: path, Content: f.Content, Mode: mode}); err != nil {
			return err
		}
		if tx.Unchanged > unchanged {
			fmt.Fprintf(w.Out, "unchanged %s\n", w.Rel(path))
		} else {
			fmt.Fprintf(w.Out, "wrote %s\n", w.Rel(path))
		}
	}
	for _, n := range AllFiles {
		if slices.Contains(names, n) {
			continue
		}
		path := filepath.Join(dir, n)
		if b, err := os.ReadFile(path); err == nil && bytes.HasPrefix(b, []byte(Header)) {
			if err := tx.Remove(path); err != nil {
				return err
			}
			fmt.Fprintf(w.Out, "removed %s (no longer part of the configuration)\n", w.Rel(path))
		}
	}
	return nil
}

// keepsEtcdMembership refuses to change the number of members of an etcd
// StatefulSet an earlier run wrote: members with data do not join a new
// cluster by a changed --initial-cluster, and the new ones would form
// another cluster beside them. Membership changes with etcdctl member add
// or remove, one member at a time (docs/deploy.md).
func keepsEtcdMembership(dir string, d *Options) error {
	if !d.etcd() {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, EtcdFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	members, ok, err := EtcdMembersIn(b)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, EtcdFile), err)
	}
	if ok && members != d.EtcdMembers {
		return fmt.Errorf("%s runs %d etcd member(s), and --etcd-members is %d: the members that hold the data would not join a new cluster. "+
			"Pass --etcd-members %d to keep it, or change the membership first (etcdctl member add/remove, one at a time: docs/deploy.md)",
			filepath.Join(dir, EtcdFile), members, d.EtcdMembers, members)
	}
	return nil
}

// certificates keeps those of an earlier run when they still fit, else
// issues new ones; the note says which and why.
func (w Writer) certificates(dir string, d *Options) (*Certificates, string, error) {
	path := filepath.Join(dir, CertificatesFile)
	rel := w.Rel(path)
	etcd := d.etcd()
	why := ""
	switch b, err := os.ReadFile(path); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, "", err
	case w.Force:
		why = " (--force)"
	default:
		old, err := ReadCertificates(b, d.Name)
		if err == nil {
			err = old.Check(d.Name, d.Namespace, etcd, w.Now)
		}
		if err == nil {
			return old, fmt.Sprintf("Kept the certificates in %s: valid for %s.%s.svc until %s (--force issues new ones).",
				rel, d.Name, d.Namespace, old.Expiry().Format(time.DateOnly)), nil
		}
		why = fmt.Sprintf(": those in %s did not fit (%v)", rel, err)
	}
	certs, err := NewCertificates(d.Name, d.Namespace, etcd, w.Now)
	if err != nil {
		return nil, "", err
	}
	return certs, fmt.Sprintf("Issued a new CA and certificates for %s.%s.svc, valid until %s%s.", d.Name, d.Namespace, certs.Expiry().Format(time.DateOnly), why), nil
}
