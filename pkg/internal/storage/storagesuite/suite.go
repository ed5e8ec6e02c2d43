// Package storagesuite runs k8s.io/apiserver's generic storage test suite
// (k8s.io/apiserver/pkg/storage/testing: RunTestCreate, RunTestList,
// RunTestWatch, …, the functions its etcd3 store_test.go and
// watcher_test.go run against a real etcd) against the etcd3 store of a
// generated apiserver whose client points at kine started in-process on a
// datastore endpoint, as --datastore-endpoint does. Run takes a function
// giving each test a fresh database: a SQLite file (this package's test) or
// a Postgres or MySQL database of a harness.
package storagesuite

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"google.golang.org/grpc/grpclog"
	"k8s.io/apimachinery/pkg/api/apitesting"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
	"k8s.io/apiserver/pkg/storage/value"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/utils/clock"

	backend "github.com/apiserver-boot/apiserver-boot/pkg/internal/storage"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

// testPrefix is what the suite's transformer prepends to every stored value.
const testPrefix = "test!"

// maxLimit is the etcd3 store's largest page (k8s.io/apiserver's etcd3
// maxLimit), for the expected number of reads of a paged list.
const maxLimit = 10000

func init() {
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(example.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(discard{}, discard{}, discard{}))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Skips are the suite's tests that fail on kine for a limitation of kine,
// with the reason; docs/storage.md lists them. Run skips them unless
// KINESTORAGE_NO_SKIP is set. None today: the four of compaction (List,
// CompactRevision, ListInconsistentContinuation, WatchFromZero), once
// skipped because kine keeps the latest 1000 revisions through a
// compaction, pass since the apiserver's kine answers below its compaction
// as etcd does (storage's compactFloor).
var Skips = map[string]string{}

// Env is one test's store and what its checks need.
type Env struct {
	Ctx         context.Context
	Store       Store
	Client      *kubernetes.Client
	Transformer *Transformer
	Codec       runtime.Codec
}

// Store is k8s.io/apiserver's etcd3 store (etcd3.New's unexported type).
type Store interface {
	storage.Interface
	CompactRevision() int64
	Close()
}

// NewEnv starts kine on endpoint (a fresh database), and an etcd3 store of
// the suite's example Pods on it, as k8s.io/apiserver's etcd3 tests do
// (testSetup): a prefix transformer and a short lease reuse.
func NewEnv(t *testing.T, endpoint string) *Env {
	t.Helper()
	o := backend.NewSQL()
	o.Endpoint = endpoint
	etcd, stop, err := backend.Open(context.Background(), backend.Backend{SQL: &o})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	client, err := kubernetes.New(clientv3.Config{Endpoints: etcd.Servers, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	recorder := storagetesting.NewKubernetesRecorder(client.Kubernetes)
	client.KV = storagetesting.NewKVRecorder(client.KV, recorder)
	client.Kubernetes = recorder

	codec := apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion)
	transformer := &Transformer{base: storagetesting.NewPrefixTransformer([]byte(testPrefix), false)}
	transformer.cur = transformer.base
	lease := etcd3.NewDefaultLeaseManagerConfig()
	lease.ReuseDurationSeconds = 1
	versioner := storage.APIObjectVersioner{}
	compactor := etcd3.NewCompactor(client.Client, 0, clock.RealClock{}, nil)
	t.Cleanup(compactor.Stop)
	s, err := etcd3.New(client, compactor, codec,
		func() runtime.Object { return &example.Pod{} }, func() runtime.Object { return &example.PodList{} },
		"", "/pods/", schema.GroupResource{Resource: "pods"}, transformer, lease,
		etcd3.NewDefaultDecoder(codec, versioner), versioner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &Env{Ctx: context.Background(), Store: s, Client: client, Transformer: transformer, Codec: codec}
}

// Transformer is the suite's prefix transformer, which tests may swap
// (storagetesting.InterfaceWithPrefixTransformer) for the store and its
// watcher at once.
type Transformer struct {
	mu   sync.RWMutex
	base *storagetesting.PrefixTransformer
	cur  value.Transformer
}

func (x *Transformer) get() value.Transformer {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.cur
}

func (x *Transformer) set(t value.Transformer) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.cur = t
}

func (x *Transformer) TransformFromStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, bool, error) {
	return x.get().TransformFromStorage(ctx, data, dataCtx)
}

func (x *Transformer) TransformToStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, error) {
	return x.get().TransformToStorage(ctx, data, dataCtx)
}

// withPrefixTransformer is the store with its transformer replaceable.
type withPrefixTransformer struct {
	Store
	x *Transformer
}

func (s withPrefixTransformer) UpdatePrefixTransformer(modifier storagetesting.PrefixTransformerModifier) func() {
	c := *s.x.base
	s.x.set(modifier(&c))
	return func() { s.x.set(s.x.base) }
}

func (e *Env) withPrefixTransformer() storagetesting.InterfaceWithPrefixTransformer {
	return withPrefixTransformer{e.Store, e.Transformer}
}

// storageInvariants checks a created key's stored value as etcd3's tests
// do: the object without resourceVersion and selfLink.
func (e *Env) storageInvariants() storagetesting.KeyValidation {
	return func(ctx context.Context, t *testing.T, key string) {
		r, err := e.Client.Client.KV.Get(ctx, key)
		if err != nil {
			t.Fatalf("get %s: %v", key, err)
		}
		if len(r.Kvs) == 0 {
			t.Fatalf("no value at %s", key)
		}
		obj, err := runtime.Decode(e.Codec, r.Kvs[0].Value[len(testPrefix):])
		if err != nil {
			t.Fatalf("decoding %s: %v", key, err)
		}
		if p := obj.(*example.Pod); p.ResourceVersion != "" || p.SelfLink != "" {
			t.Errorf("stored object has resourceVersion %q, selfLink %q: want them empty", p.ResourceVersion, p.SelfLink)
		}
	}
}

// compaction compacts through etcd's API (as the apiserver's compactor
// does) and waits for the store to see it when it watches the compact key.
func (e *Env) compaction() storagetesting.Compaction {
	return func(ctx context.Context, t *testing.T, resourceVersion string) {
		rv, err := storage.APIObjectVersioner{}.ParseResourceVersion(resourceVersion)
		if err != nil {
			t.Fatal(err)
		}
		cur, _, _, err := etcd3.Compact(ctx, e.Client.Client, 0, int64(rv))
		if err != nil {
			_, _, _, err = etcd3.Compact(ctx, e.Client.Client, cur, int64(rv))
		}
		if err != nil {
			t.Fatal(err)
		}
		if utilfeature.DefaultFeatureGate.Enabled(features.ListFromCacheSnapshot) {
			for deadline := time.Now().Add(30 * time.Second); e.Store.CompactRevision() != int64(rv); time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the store did not observe the compaction to %d in 30s (at %d)", rv, e.Store.CompactRevision())
				}
			}
		}
	}
}

func (e *Env) increaseRV() storagetesting.IncreaseRVFunc {
	return func(ctx context.Context, t *testing.T) int64 {
		r, err := e.Client.Client.KV.Put(ctx, "increaseRV", "ok")
		if err != nil {
			t.Fatalf("put increaseRV: %v", err)
		}
		return r.Header.Revision
	}
}

// callsValidation checks the number of reads of a paged list, as etcd3's
// checkStorageCallsInvariants does.
func (e *Env) callsValidation() storagetesting.CallsValidation {
	kv := e.Client.KV.(*storagetesting.KVRecorder)
	return func(t *testing.T, pageSize, estimatedProcessedObjects uint64) {
		if reads := e.Transformer.base.GetReadsAndReset(); reads != estimatedProcessedObjects {
			t.Errorf("unexpected reads: %d, expected: %d", reads, estimatedProcessedObjects)
		}
		estimatedGetCalls := uint64(1)
		if pageSize != 0 {
			limit := pageSize
			for sum := uint64(1); sum < estimatedProcessedObjects; {
				limit = min(limit*2, maxLimit)
				sum += limit
				estimatedGetCalls++
			}
		}
		if reads := kv.GetReadsAndReset() + kv.GetStreamReadsAndReset(); reads != estimatedGetCalls {
			t.Fatalf("unexpected reads: %d, want: %d", reads, estimatedGetCalls)
		}
	}
}

// Test is one test of the suite, as etcd3's store_test.go and
// watcher_test.go call it.
type Test struct {
	Name string
	// Gates are feature gates set for the test, as etcd3's tests set them.
	Gates map[featuregate.Feature]bool
	Run   func(t *testing.T, e *Env)
}

// Tests are the suite's tests whose outcome depends on the store's backend.
// Left out: the ones testing k8s.io/apiserver's own decoding and
// transformation error paths with its unexported corrupt-object types
// (…TransformOrDecodeError, GetListWith(out)ErrorAggregation,
// WatchWithUnsafeDelete), whose code does not reach the backend.
var Tests = []Test{
	{Name: "Create", Run: func(t *testing.T, e *Env) { storagetesting.RunTestCreate(e.Ctx, t, e.Store, e.storageInvariants()) }},
	{Name: "CreateWithTTL", Run: func(t *testing.T, e *Env) { storagetesting.RunTestCreateWithTTL(e.Ctx, t, e.Store) }},
	{Name: "CreateWithKeyExist", Run: func(t *testing.T, e *Env) { storagetesting.RunTestCreateWithKeyExist(e.Ctx, t, e.Store) }},
	{Name: "Get", Run: func(t *testing.T, e *Env) { storagetesting.RunTestGet(e.Ctx, t, e.Store) }},
	{Name: "UnconditionalDelete", Run: func(t *testing.T, e *Env) { storagetesting.RunTestUnconditionalDelete(e.Ctx, t, e.Store) }},
	{Name: "ConditionalDelete", Run: func(t *testing.T, e *Env) { storagetesting.RunTestConditionalDelete(e.Ctx, t, e.Store) }},
	{Name: "DeleteWithSuggestion", Run: func(t *testing.T, e *Env) { storagetesting.RunTestDeleteWithSuggestion(e.Ctx, t, e.Store) }},
	{Name: "DeleteWithSuggestionAndConflict", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestDeleteWithSuggestionAndConflict(e.Ctx, t, e.Store)
	}},
	{Name: "DeleteWithSuggestionOfDeletedObject", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestDeleteWithSuggestionOfDeletedObject(e.Ctx, t, e.Store)
	}},
	{Name: "ValidateDeletionWithSuggestion", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestValidateDeletionWithSuggestion(e.Ctx, t, e.Store)
	}},
	{Name: "ValidateDeletionWithOnlySuggestionValid", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestValidateDeletionWithOnlySuggestionValid(e.Ctx, t, e.Store)
	}},
	{Name: "DeleteWithConflict", Run: func(t *testing.T, e *Env) { storagetesting.RunTestDeleteWithConflict(e.Ctx, t, e.Store) }},
	{Name: "PreconditionalDeleteWithSuggestion", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestPreconditionalDeleteWithSuggestion(e.Ctx, t, e.Store)
	}},
	{Name: "PreconditionalDeleteWithOnlySuggestionPass", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestPreconditionalDeleteWithOnlySuggestionPass(e.Ctx, t, e.Store)
	}},
	{Name: "ListPaging", Run: func(t *testing.T, e *Env) { storagetesting.RunTestListPaging(e.Ctx, t, e.Store) }},
	{Name: "GetListNonRecursive", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestGetListNonRecursive(e.Ctx, t, e.increaseRV(), e.Store)
	}},
	{Name: "GetListRecursivePrefix", Run: func(t *testing.T, e *Env) { storagetesting.RunTestGetListRecursivePrefix(e.Ctx, t, e.Store) }},
	{Name: "KeySchema", Run: func(t *testing.T, e *Env) { storagetesting.RunTestKeySchema(e.Ctx, t, e.Store) }},
	{Name: "GuaranteedUpdate", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestGuaranteedUpdate(e.Ctx, t, e.withPrefixTransformer(), e.storageInvariants())
	}},
	{Name: "GuaranteedUpdateWithTTL", Run: func(t *testing.T, e *Env) { storagetesting.RunTestGuaranteedUpdateWithTTL(e.Ctx, t, e.Store) }},
	{Name: "GuaranteedUpdateChecksStoredData", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestGuaranteedUpdateChecksStoredData(e.Ctx, t, e.withPrefixTransformer())
	}},
	{Name: "GuaranteedUpdateWithConflict", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestGuaranteedUpdateWithConflict(e.Ctx, t, e.Store)
	}},
	{Name: "GuaranteedUpdateWithSuggestionAndConflict", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestGuaranteedUpdateWithSuggestionAndConflict(e.Ctx, t, e.Store)
	}},
	{Name: "TransformationFailure", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestTransformationFailure(e.Ctx, t, e.withPrefixTransformer())
	}},
	{Name: "List", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestList(e.Ctx, t, e.Store, e.compaction(), false, e.Client.Kubernetes.(*storagetesting.KubernetesRecorder))
	}},
	{Name: "ConsistentList", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestConsistentList(e.Ctx, t, e.Store, e.increaseRV(), false, true, false)
	}},
	{Name: "CompactRevision", Gates: map[featuregate.Feature]bool{(features.ListFromCacheSnapshot): true}, Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestCompactRevision(e.Ctx, t, e.Store, e.increaseRV(), e.compaction())
	}},
	{Name: "ListContinuation", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestListContinuation(e.Ctx, t, e.Store, e.callsValidation())
	}},
	{Name: "ListPaginationRareObject", Gates: map[featuregate.Feature]bool{(features.ListFromCacheSnapshot): false}, Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestListPaginationRareObject(e.Ctx, t, e.Store, e.callsValidation())
	}},
	{Name: "ListContinuationWithFilter", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestListContinuationWithFilter(e.Ctx, t, e.Store, e.callsValidation())
	}},
	{Name: "NamespaceScopedList", Run: func(t *testing.T, e *Env) { storagetesting.RunTestNamespaceScopedList(e.Ctx, t, e.Store) }},
	{Name: "ListInconsistentContinuation", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestListInconsistentContinuation(e.Ctx, t, e.Store, e.compaction())
	}},
	{Name: "ListResourceVersionMatch", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestListResourceVersionMatch(e.Ctx, t, e.withPrefixTransformer())
	}},
	{Name: "Stats", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestStats(e.Ctx, t, e.Store, e.Codec, e.Transformer, false)
	}},

	{Name: "Watch", Run: func(t *testing.T, e *Env) { storagetesting.RunTestWatch(e.Ctx, t, e.Store) }},
	{Name: "ClusterScopedWatch", Run: func(t *testing.T, e *Env) { storagetesting.RunTestClusterScopedWatch(e.Ctx, t, e.Store) }},
	{Name: "NamespaceScopedWatch", Run: func(t *testing.T, e *Env) { storagetesting.RunTestNamespaceScopedWatch(e.Ctx, t, e.Store) }},
	{Name: "DeleteTriggerWatch", Run: func(t *testing.T, e *Env) { storagetesting.RunTestDeleteTriggerWatch(e.Ctx, t, e.Store) }},
	{Name: "WatchFromZero", Run: func(t *testing.T, e *Env) { storagetesting.RunTestWatchFromZero(e.Ctx, t, e.Store, e.compaction()) }},
	{Name: "WatchFromNonZero", Run: func(t *testing.T, e *Env) { storagetesting.RunTestWatchFromNonZero(e.Ctx, t, e.Store) }},
	{Name: "DelayedWatchDelivery", Run: func(t *testing.T, e *Env) { storagetesting.RunTestDelayedWatchDelivery(e.Ctx, t, e.Store) }},
	{Name: "WatchError", Run: func(t *testing.T, e *Env) { storagetesting.RunTestWatchError(e.Ctx, t, e.withPrefixTransformer()) }},
	{Name: "WatchContextCancel", Run: func(t *testing.T, e *Env) { storagetesting.RunTestWatchContextCancel(e.Ctx, t, e.Store) }},
	{Name: "WatcherTimeout", Run: func(t *testing.T, e *Env) { storagetesting.RunTestWatcherTimeout(e.Ctx, t, e.Store) }},
	{Name: "WatchDeleteEventObjectHaveLatestRV", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestWatchDeleteEventObjectHaveLatestRV(e.Ctx, t, e.Store)
	}},
	{Name: "WatchInitializationSignal", Run: func(t *testing.T, e *Env) { storagetesting.RunTestWatchInitializationSignal(e.Ctx, t, e.Store) }},
	{Name: "ProgressNotify", Run: func(t *testing.T, e *Env) {
		storagetesting.RunOptionalTestProgressNotify(e.Ctx, t, e.Store, e.increaseRV())
	}},
	{Name: "WatchDispatchBookmarkEvents", Run: func(t *testing.T, e *Env) {
		storagetesting.RunTestWatchDispatchBookmarkEvents(e.Ctx, t, e.Store, false)
	}},
	{Name: "SendInitialEventsBackwardCompatibility", Run: func(t *testing.T, e *Env) {
		storagetesting.RunSendInitialEventsBackwardCompatibility(e.Ctx, t, e.Store)
	}},
	{Name: "WatchSemantics", Run: func(t *testing.T, e *Env) { storagetesting.RunWatchSemantics(e.Ctx, t, e.Store) }},
	{Name: "WatchSemanticsWithConcurrentDecode", Gates: map[featuregate.Feature]bool{(features.ConcurrentWatchObjectDecode): true}, Run: func(t *testing.T, e *Env) {
		storagetesting.RunWatchSemantics(e.Ctx, t, e.Store)
	}},
	{Name: "WatchSemanticInitialEventsExtended", Run: func(t *testing.T, e *Env) {
		storagetesting.RunWatchSemanticInitialEventsExtended(e.Ctx, t, e.Store)
	}},
	{Name: "WatchListMatchSingle", Run: func(t *testing.T, e *Env) { storagetesting.RunWatchListMatchSingle(e.Ctx, t, e.Store) }},
	{Name: "WatchErrorIsBlockingFurtherEvents", Run: func(t *testing.T, e *Env) {
		storagetesting.RunWatchErrorIsBlockingFurtherEvents(e.Ctx, t, e.withPrefixTransformer())
	}},
}

// Run runs every test of Tests, each on a fresh database whose endpoint
// newEndpoint gives (sqlite://… in a temporary folder, or a new Postgres or
// MySQL database), with kine configured as the apiserver configures it,
// skipping the ones in Skips.
func Run(t *testing.T, newEndpoint func(t *testing.T) string) {
	for _, tc := range Tests {
		t.Run(tc.Name, func(t *testing.T) {
			if why, ok := Skips[tc.Name]; ok && !noSkip() {
				t.Skip(why)
			}
			for name, on := range tc.Gates {
				featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, name, on)
			}
			tc.Run(t, NewEnv(t, newEndpoint(t)))
		})
	}
}

func noSkip() bool { return os.Getenv("KINESTORAGE_NO_SKIP") != "" }
