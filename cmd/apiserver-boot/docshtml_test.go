package main

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	hrefs = regexp.MustCompile(`href="([^"]*)"`)
	ids   = regexp.MustCompile(`id="([^"]*)"`)
)

// TestBuildDocsHTML: build docs --format html on the example project writes
// a site whose every internal link resolves (page and anchor), that loads
// nothing from the network, and that headless Chromium opens without a
// console error; a screenshot of the CronTab page is left for review.
func TestBuildDocsHTML(t *testing.T) {
	if testing.Short() {
		t.Skip("loads Go packages")
	}
	example, _ := filepath.Abs(filepath.Join("..", "..", "example"))
	out := t.TempDir()
	if msg, err := run(t, example, "build", "docs", "--format", "html", "--output", out); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	pages, _ := filepath.Glob(filepath.Join(out, "*.html"))
	if len(pages) != 2 {
		t.Fatalf("pages %v, want index.html and stable.example.com.html", pages)
	}
	links := 0
	for _, p := range pages {
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte("<script")) || regexp.MustCompile(`(src|href)="https?://[^"]*"[^>]*rel="stylesheet"|<link[^>]*href="https?:`).Match(b) {
			t.Errorf("%s loads something", filepath.Base(p))
		}
		for _, m := range hrefs.FindAllSubmatch(b, -1) {
			href := string(m[1])
			if strings.HasPrefix(href, "http://") || strings.HasPrefix(href, "https://") || strings.HasPrefix(href, "data:") {
				continue
			}
			links++
			file, frag, _ := strings.Cut(href, "#")
			target := p
			if file != "" {
				target = filepath.Join(out, file)
			}
			tb, err := os.ReadFile(target)
			if err != nil {
				t.Errorf("%s: link %q: no page %s", filepath.Base(p), href, file)
				continue
			}
			if frag != "" && !bytes.Contains(tb, []byte(`id="`+frag+`"`)) {
				t.Errorf("%s: link %q: no anchor %q in %s", filepath.Base(p), href, frag, filepath.Base(target))
			}
		}
	}
	if links < 20 {
		t.Errorf("%d internal links", links)
	}

	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("APISERVER_BOOT_REQUIRE_CHROMIUM") != "" {
			t.Fatal("chromium is not installed (apt-get install chromium)")
		}
		t.Skip("no chromium: the links are checked, the browser is not (CI installs it)")
	}
	open := func(page string, args ...string) string {
		cmd := exec.Command(chromium, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
			"--user-data-dir=" + t.TempDir(), "--window-size=1280,1600", "--virtual-time-budget=3000"}, append(args, "file://"+page)...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %s: %v\n%s", page, err, stderr.String())
		}
		return stderr.String()
	}
	consoleErrors := func(log string) []string {
		var found []string
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Failed to load resource") || strings.Contains(line, "Uncaught") {
				found = append(found, line)
			}
		}
		return found
	}
	// The check sees a console error when there is one.
	broken := filepath.Join(t.TempDir(), "broken.html")
	os.WriteFile(broken, []byte(`<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body><script>console.error("broken page")</script></body></html>`), 0o644)
	if len(consoleErrors(open(broken, "--dump-dom"))) == 0 {
		t.Fatal("a page with a console error passes the check")
	}
	for _, p := range pages {
		if errs := consoleErrors(open(p, "--dump-dom")); len(errs) > 0 {
			t.Errorf("%s: console errors:\n%s", filepath.Base(p), strings.Join(errs, "\n"))
		}
	}
	shots := filepath.Join(os.TempDir(), "apiserver-boot-build-docs")
	os.MkdirAll(shots, 0o755)
	shot := filepath.Join(shots, "crontab.png")
	os.Remove(shot)
	open(filepath.Join(out, "stable.example.com.html"), "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	colours := map[uint32]bool{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 7 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|b>>8] = true
		}
	}
	if len(colours) < 10 {
		t.Errorf("the screenshot is blank (%d colours)", len(colours))
	}
	t.Logf("screenshot of the CronTab page (%dx%d): %s", bounds.Dx(), bounds.Dy(), shot)
}
