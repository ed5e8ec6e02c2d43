// Package progress shows what a long step (a go build, generate) is doing.
// On a terminal, one status line ("Building bin/apiserver: 312 packages
// compiled, 1m12s") is rewritten in place, and any other output is printed
// above it; otherwise a plain line is printed every Interval. Counts are
// real: they are the packages `go build -v` names as it compiles them.
package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Interval is how often output that is not a terminal gets a progress line.
var Interval = 15 * time.Second

// redraw is how often the status line on a terminal is rewritten.
const redraw = 250 * time.Millisecond

// Console is the output of a command: everything written through it, or its
// Err, appears above the status line of the running Task, if any. Quiet
// drops Info and the progress, not errors, warnings or results.
type Console struct {
	mu       sync.Mutex
	out, err io.Writer
	tty      bool
	quiet    bool
	width    int
	interval time.Duration
	now      func() time.Time
	// ticker starts the ticks of a task's progress; the returned func
	// stops them. ticked, if set, is called after each tick is handled.
	ticker func(time.Duration) (<-chan time.Time, func())
	ticked func()
	// status is the line shown on the terminal; empty when none is.
	status string
	// open says that the last byte written, to the output or the error
	// output (one terminal, usually), was not a newline: a line is under
	// way, and the progress waits for its end rather than erase or split it.
	open bool
	task *Task
}

// NewConsole writes to out and errOut; when out is a terminal, the status
// line is drawn there.
func NewConsole(out, errOut io.Writer, quiet bool) *Console {
	c := &Console{out: out, err: errOut, quiet: quiet, interval: Interval, now: time.Now, ticker: newTicker}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		c.tty = true
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			c.width = w
		}
	}
	return c
}

// Quiet says whether the console drops progress and Info.
func (c *Console) Quiet() bool { return c.quiet }

// Write writes p to the output, above the status line.
func (c *Console) Write(p []byte) (int, error) {
	return c.writeTo(c.out, p)
}

// Err is the error output, written above the status line.
func (c *Console) Err() io.Writer {
	return writerFunc(func(p []byte) (int, error) { return c.writeTo(c.err, p) })
}

// Info is the output of what is not an error, warning or result: the
// console, or nothing when quiet.
func (c *Console) Info() io.Writer {
	if c.quiet {
		return io.Discard
	}
	return c
}

func (c *Console) writeTo(w io.Writer, p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearLocked()
	n, err := w.Write(p)
	if n > 0 {
		c.open = p[n-1] != '\n'
	}
	c.drawLocked()
	return n, err
}

// clearLocked removes the status line from the terminal.
func (c *Console) clearLocked() {
	if c.status != "" {
		fmt.Fprint(c.out, "\r\033[K")
		c.status = ""
	}
}

// drawLocked draws the running task's status line on the terminal, unless
// a line is under way.
func (c *Console) drawLocked() {
	if !c.tty || c.task == nil || c.open {
		return
	}
	s := c.task.line(c.now())
	if c.width > 1 && len(s) >= c.width {
		s = s[:c.width-1]
	}
	if s == c.status {
		return
	}
	fmt.Fprint(c.out, "\r\033[K"+s)
	c.status = s
}

// Task is a long step under way.
type Task struct {
	c       *Console
	step    string
	unit    string
	count   int
	started time.Time
	stop    chan struct{}
	stopped chan struct{}
}

// Start shows the progress of step until Done: "<step>: <count> <unit>,
// <elapsed>", or "<step>: <elapsed>" when unit is empty. One task runs at a
// time.
func (c *Console) Start(step, unit string) *Task {
	t := &Task{c: c, step: step, unit: unit, started: c.now(), stop: make(chan struct{}), stopped: make(chan struct{})}
	if c.quiet {
		close(t.stopped)
		return t
	}
	c.mu.Lock()
	c.task = t
	c.drawLocked()
	c.mu.Unlock()
	every := c.interval
	if c.tty {
		every = redraw
	}
	tick, stop := c.ticker(every)
	go func() {
		defer close(t.stopped)
		defer stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tick:
			}
			c.mu.Lock()
			if c.tty {
				c.drawLocked()
			} else if !c.open {
				// With a line under way, this tick's line is skipped.
				fmt.Fprintln(c.out, t.line(c.now()))
			}
			c.mu.Unlock()
			if c.ticked != nil {
				c.ticked()
			}
		}
	}()
	return t
}

func newTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// line is the status: the step, the count and the time elapsed.
func (t *Task) line(now time.Time) string {
	elapsed := now.Sub(t.started).Round(time.Second)
	if t.unit == "" {
		return fmt.Sprintf("%s: %s", t.step, elapsed)
	}
	return fmt.Sprintf("%s: %d %s, %s", t.step, t.count, t.unit, elapsed)
}

// Add counts n more units done.
func (t *Task) Add(n int) {
	t.c.mu.Lock()
	t.count += n
	t.c.mu.Unlock()
}

// Count is the number of units done.
func (t *Task) Count() int {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.count
}

// Done ends the task and removes its status line; it returns the time
// since Start.
func (t *Task) Done() time.Duration {
	select {
	case <-t.stop:
	default:
		close(t.stop)
	}
	<-t.stopped
	c := t.c
	c.mu.Lock()
	if c.task == t {
		c.task = nil
		c.clearLocked()
	}
	c.mu.Unlock()
	return c.now().Sub(t.started)
}

// GoBuildOutput is where `go build -v` writes (its standard error): each
// package it names counts as one compiled; other lines (compile errors,
// "go: downloading ...") go to the console's error output, except the
// downloads when quiet. Close it after the build to flush a last partial
// line.
func (t *Task) GoBuildOutput() io.WriteCloser {
	return &lines{f: func(line string) {
		switch {
		case IsPackageLine(line):
			t.Add(1)
		case t.c.quiet && strings.HasPrefix(line, "go: downloading "):
		default:
			fmt.Fprintln(t.c.Err(), line)
		}
	}}
}

// IsPackageLine says whether a line of `go build -v` names a package it
// compiled: an import path alone, as opposed to an error ("x.go:3:2: ..."),
// a heading ("# pkg") or a message ("go: downloading m v1").
func IsPackageLine(line string) bool {
	if line == "" || strings.HasPrefix(line, "#") || strings.ContainsAny(line, " \t:\"'`\\") {
		return false
	}
	for _, r := range line {
		if r < 0x21 || r > 0x7e {
			return false
		}
	}
	return true
}

// Lines calls f with each line written to it (without its newline); Close
// flushes a last line without one.
func Lines(f func(line string)) io.WriteCloser { return &lines{f: f} }

// lines calls f with each line written to it.
type lines struct {
	mu  sync.Mutex
	buf []byte
	f   func(string)
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.f(strings.TrimSuffix(string(l.buf[:i]), "\r"))
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

func (l *lines) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.f(string(l.buf))
		l.buf = nil
	}
	return nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
