package progress

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// buffer is a bytes.Buffer safe for the ticker's goroutine.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// ticks is the ticker of a test console: tick delivers one tick to the
// running task and returns once the task has handled it.
type ticks struct {
	c       chan time.Time
	handled chan struct{}
	mu      sync.Mutex
	// running is the number of tickers started and not stopped; started
	// counts them all.
	running, started int
}

func (k *ticks) ticker(time.Duration) (<-chan time.Time, func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.running++
	k.started++
	var once sync.Once
	return k.c, func() {
		once.Do(func() {
			k.mu.Lock()
			k.running--
			k.mu.Unlock()
		})
	}
}

func (k *ticks) counts() (running, started int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.running, k.started
}

func (k *ticks) tick(t *testing.T) {
	t.Helper()
	if running, _ := k.counts(); running != 1 {
		t.Fatalf("%d tickers running, want 1", running)
	}
	select {
	case k.c <- time.Time{}:
	case <-time.After(10 * time.Second):
		t.Fatal("the task reads no ticks")
	}
	<-k.handled
}

func testConsole(out, errOut io.Writer, tty, quiet bool) (*Console, *clock, *ticks) {
	clk := &clock{t: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	k := &ticks{c: make(chan time.Time), handled: make(chan struct{})}
	c := NewConsole(out, errOut, quiet)
	c.tty, c.now = tty, clk.now
	c.ticker, c.ticked = k.ticker, func() { k.handled <- struct{}{} }
	return c, clk, k
}

// screen is what a terminal shows for s: \r returns to the line's start,
// ESC[K erases to its end.
func screen(s string) []string {
	lines := []string{""}
	col := 0
	for i := 0; i < len(s); i++ {
		cur := &lines[len(lines)-1]
		switch {
		case s[i] == '\n':
			lines = append(lines, "")
			col = 0
		case s[i] == '\r':
			col = 0
		case strings.HasPrefix(s[i:], "\033[K"):
			*cur = (*cur)[:col]
			i += 2
		default:
			if col < len(*cur) {
				*cur = (*cur)[:col] + string(s[i]) + (*cur)[col+1:]
			} else {
				*cur += string(s[i])
			}
			col++
		}
	}
	return lines
}

// goBuildV is what `go build -v` writes while compiling, then failing.
const goBuildV = `go: downloading k8s.io/apiserver v0.37.2
k8s.io/apimachinery/pkg/util/sets
k8s.io/apiserver/pkg/server
example.com/crontab/pkg/apis/stable/v1
# example.com/crontab/pkg/apis/stable/v1
pkg/apis/stable/v1/crontab_types.go:12:2: undefined: Foo
	have (string)
command-line-arguments
`

func TestIsPackageLine(t *testing.T) {
	for line, want := range map[string]bool{
		"k8s.io/apimachinery/pkg/util/sets":        true,
		"example.com/crontab/cmd/apiserver":        true,
		"golang.org/x/net/http2/hpack":             true,
		"gopkg.in/yaml.v3":                         true,
		"command-line-arguments":                   true,
		"":                                         false,
		"# example.com/crontab/pkg/apis/stable/v1": false,
		"pkg/apis/stable/v1/x.go:12:2: undefined":  false,
		"go: downloading k8s.io/api v0.37.2":       false,
		"\thave (string)":                          false,
		"note: module requires Go 1.27":            false,
	} {
		if got := IsPackageLine(line); got != want {
			t.Errorf("IsPackageLine(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestGoBuildOutputCounts: each package go build -v names counts once;
// everything else reaches the error output, in order.
func TestGoBuildOutputCounts(t *testing.T) {
	var out, errOut buffer
	c, _, _ := testConsole(&out, &errOut, false, false)
	task := c.Start("Building bin/apiserver", "packages compiled")
	w := task.GoBuildOutput()
	// Written in pieces that split lines, as a pipe delivers them.
	for _, chunk := range []string{goBuildV[:30], goBuildV[30:90], goBuildV[90:]} {
		io.WriteString(w, chunk)
	}
	io.WriteString(w, "k8s.io/client-go/rest") // no newline: flushed by Close
	w.Close()
	task.Done()
	if got := task.Count(); got != 5 {
		t.Errorf("counted %d packages, want 5", got)
	}
	want := "go: downloading k8s.io/apiserver v0.37.2\n# example.com/crontab/pkg/apis/stable/v1\npkg/apis/stable/v1/crontab_types.go:12:2: undefined: Foo\n\thave (string)\n"
	if errOut.String() != want {
		t.Errorf("error output:\n%q\nwant\n%q", errOut.String(), want)
	}
}

// TestPlainOutput: not a terminal: a plain line every interval naming the
// step, the count and the time elapsed; no escape sequences.
func TestPlainOutput(t *testing.T) {
	var out buffer
	c, clk, k := testConsole(&out, &out, false, false)
	task := c.Start("Building bin/apiserver and bin/controller-manager", "packages compiled")
	w := task.GoBuildOutput()
	io.WriteString(w, "k8s.io/a\nk8s.io/b\nk8s.io/c\n")
	clk.advance(72 * time.Second)
	k.tick(t)
	fmt.Fprintln(c, "a log line")
	clk.advance(time.Second)
	k.tick(t)
	task.Done()
	want := "Building bin/apiserver and bin/controller-manager: 3 packages compiled, 1m12s\n" +
		"a log line\n" +
		"Building bin/apiserver and bin/controller-manager: 3 packages compiled, 1m13s\n"
	if got := out.String(); got != want {
		t.Errorf("output:\n%q\nwant\n%q", got, want)
	}
	// Nothing after Done: its ticker is stopped and no longer read.
	if running, _ := k.counts(); running != 0 {
		t.Errorf("%d tickers running after Done", running)
	}
	select {
	case k.c <- time.Time{}:
		t.Error("a tick was read after Done")
	default:
	}
	if got := out.String(); got != want {
		t.Errorf("printed after Done: %q", strings.TrimPrefix(got, want))
	}
}

// TestTerminalOutput: on a terminal the status line is rewritten in place,
// other output appears above it, and Done erases it.
func TestTerminalOutput(t *testing.T) {
	var out buffer
	c, clk, k := testConsole(&out, &out, true, false)
	task := c.Start("Building bin/apiserver", "packages compiled")
	if s := screen(out.String()); len(s) != 1 || s[0] != "Building bin/apiserver: 0 packages compiled, 0s" {
		t.Fatalf("screen after Start: %q", s)
	}
	io.WriteString(task.GoBuildOutput(), "k8s.io/a\nk8s.io/b\n")
	clk.advance(5 * time.Second)
	fmt.Fprintln(c, "[apiserver] serving")
	fmt.Fprintln(c.Err(), "warning: something")
	if s := screen(out.String()); len(s) != 3 || s[0] != "[apiserver] serving" || s[1] != "warning: something" || s[2] != "Building bin/apiserver: 2 packages compiled, 5s" {
		t.Fatalf("screen with output during the task: %q", s)
	}
	clk.advance(time.Minute)
	k.tick(t)
	if s := screen(out.String()); s[2] != "Building bin/apiserver: 2 packages compiled, 1m5s" {
		t.Fatalf("the status line is not redrawn with the time: %q", s)
	}
	task.Done()
	fmt.Fprintln(c, "Built.")
	if s := screen(out.String()); len(s) != 4 || s[2] != "Built." || s[3] != "" {
		t.Errorf("screen after Done: %q", s)
	}
}

// TestPartialLine: output that does not end in a newline is not erased nor
// split by the progress: the status line (or a plain progress line) waits
// for the end of the line, on the output or the error output.
func TestPartialLine(t *testing.T) {
	var out buffer
	c, clk, k := testConsole(&out, &out, true, false)
	io.WriteString(c, "Checking ")
	task := c.Start("Building bin/apiserver", "packages compiled")
	k.tick(t)
	if s := screen(out.String()); len(s) != 1 || s[0] != "Checking " {
		t.Fatalf("screen after Start with a line under way: %q", s)
	}
	io.WriteString(c, "go.mod: ok\nGenerating")
	clk.advance(2 * time.Second)
	k.tick(t)
	io.WriteString(c.Err(), "warning: slow")
	k.tick(t)
	if s := screen(out.String()); len(s) != 2 || s[0] != "Checking go.mod: ok" || s[1] != "Generatingwarning: slow" {
		t.Fatalf("screen with a line under way: %q", s)
	}
	io.WriteString(c.Err(), "\n")
	if s := screen(out.String()); len(s) != 3 || s[1] != "Generatingwarning: slow" || s[2] != "Building bin/apiserver: 0 packages compiled, 2s" {
		t.Fatalf("screen once the line ends: %q", s)
	}
	task.Done()

	var plain buffer
	c, clk, k = testConsole(&plain, &plain, false, false)
	task = c.Start("Generating code", "")
	io.WriteString(c, "generate: ")
	clk.advance(15 * time.Second)
	k.tick(t)
	io.WriteString(c, "up to date\n")
	clk.advance(15 * time.Second)
	k.tick(t)
	task.Done()
	if want := "generate: up to date\nGenerating code: 30s\n"; plain.String() != want {
		t.Errorf("plain output:\n%q\nwant\n%q", plain.String(), want)
	}
}

// TestQuiet: no progress and no Info; errors still reach the error output.
func TestQuiet(t *testing.T) {
	var out, errOut buffer
	c, clk, k := testConsole(&out, &errOut, false, true)
	task := c.Start("Building bin/apiserver", "packages compiled")
	w := task.GoBuildOutput()
	io.WriteString(w, goBuildV)
	clk.advance(time.Minute)
	fmt.Fprintln(c.Info(), "Built in 1m.")
	task.Done()
	if _, started := k.counts(); started != 0 {
		t.Errorf("quiet: %d tickers started for the progress", started)
	}
	if out.String() != "" {
		t.Errorf("quiet output: %q", out.String())
	}
	if task.Count() != 4 {
		t.Errorf("quiet count: %d", task.Count())
	}
	if strings.Contains(errOut.String(), "downloading") || !strings.Contains(errOut.String(), "undefined: Foo") {
		t.Errorf("quiet error output: %q", errOut.String())
	}
}

// TestElapsedOnly: a step without a count shows its time.
func TestElapsedOnly(t *testing.T) {
	var out buffer
	c, clk, k := testConsole(&out, &out, false, false)
	task := c.Start("Generating code", "")
	clk.advance(12 * time.Second)
	k.tick(t)
	task.Done()
	if out.String() != "Generating code: 12s\n" {
		t.Errorf("output: %q", out.String())
	}
}
