package standalone

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	restclient "k8s.io/client-go/rest"
)

// TestLoopbackHangsUpOnStop: once the server stops, the namespace
// informers' loopback client closes its connection itself. A connection
// left idle holds the HTTP/2 server's stop for a second (the GOAWAY wait),
// which run local paid at every restart; this server never sends a GOAWAY,
// so without the hang-up the connection stays open and the test fails.
func TestLoopbackHangsUpOnStop(t *testing.T) {
	// Plain LIST and WATCH (this fake server streams no initial events).
	t.Setenv("KUBE_FEATURE_WatchListClient", "false")
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	closed := make(chan struct{}, 16)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // a watch without events, until the client ends it
			return
		}
		if !strings.HasSuffix(r.URL.Path, "/namespaces") {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"kind":"NamespaceList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`))
	}))
	srv.EnableHTTP2 = true
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open[c] = true
		case http.StateClosed, http.StateHijacked:
			if open[c] {
				delete(open, c)
				closed <- struct{}{}
			}
		}
	}
	srv.StartTLS()
	defer srv.Close()

	c := genericapiserver.NewRecommendedConfig(serializer.NewCodecFactory(runtime.NewScheme()))
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	c.LoopbackClientConfig = &restclient.Config{Host: srv.URL, TLSClientConfig: restclient.TLSClientConfig{CAData: ca}}
	l, err := namespaceAdmission(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	l.Start(ctx.Done())
	failsafe, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	synced := l.WaitForCacheSync(failsafe.Done())
	for typ, ok := range synced {
		if !ok {
			t.Fatalf("informer of %v did not sync", typ)
		}
	}
	mu.Lock()
	conns := len(open)
	mu.Unlock()
	if conns == 0 {
		t.Fatal("the informers opened no connection to the server")
	}

	done := make(chan struct{})
	go func() { l.hangUpAfter(ctx); close(done) }()
	stop()
	<-done
	for i := 0; i < conns; i++ {
		select {
		case <-closed:
		case <-time.After(time.Minute): // a failsafe: without the hang-up, never
			t.Fatalf("the loopback client left %d of %d connections open after the stop", conns-i, conns)
		}
	}
}
