// Command kubeset-bench-go is the client-go side of `cargo xtask bench`.
// It prints a JSON array of records in the shape of the Rust crate's
// Record (bench, impl, items, bytes, samples_s, median_s, p50_us, p99_us).
//
//	kubeset-bench-go codec FILE RUNS
//	kubeset-bench-go watch STREAM RUNS
//	kubeset-bench-go roundtrip URL SEQ CONC TOTAL
//	kubeset-bench-go cache URL UPDATES [protobuf]
//	kubeset-bench-go scale URL UPDATES [protobuf]
//	kubeset-bench-go to-protobuf PODLIST.json OUT.pb
//	kubeset-bench-go codec-protobuf FILE.pb RUNS [KUBESET.pb]
//	kubeset-bench-go watch-to-protobuf STREAM.jsonl OUT
//	kubeset-bench-go watch-protobuf STREAM RUNS
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	restwatch "k8s.io/client-go/rest/watch"
	"k8s.io/client-go/tools/cache"
)

type record struct {
	Bench    string    `json:"bench"`
	Impl     string    `json:"impl"`
	Items    uint64    `json:"items"`
	Bytes    *uint64   `json:"bytes,omitempty"`
	SamplesS []float64 `json:"samples_s"`
	MedianS  float64   `json:"median_s"`
	P50Us    *float64  `json:"p50_us,omitempty"`
	P99Us    *float64  `json:"p99_us,omitempty"`
	CPUS     *float64  `json:"cpu_s,omitempty"`
	PeakKiB  *uint64   `json:"peak_rss_kib,omitempty"`
	Variant  string    `json:"variant,omitempty"`
}

// cpuS is this process's user+system CPU seconds from /proc/self/stat
// (the same source and resolution as the Rust side).
func cpuS() float64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return float64(u+s) / 100
}

func cpuSince(before float64) *float64 {
	now := cpuS()
	if before < 0 || now < 0 {
		return nil
	}
	d := now - before
	return &d
}

// peakRSSKiB is VmHWM from /proc/self/status.
func peakRSSKiB() *uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return nil
			}
			return &n
		}
	}
	return nil
}

func percentile(samples []float64, p float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	v := append([]float64(nil), samples...)
	sort.Float64s(v)
	rank := p / 100 * float64(len(v)-1)
	lo, hi := int(rank), int(rank)
	if float64(hi) < rank {
		hi++
	}
	return v[lo] + (v[hi]-v[lo])*(rank-float64(lo))
}

func timed(bench, impl string, items uint64, samples []float64) record {
	return record{Bench: bench, Impl: impl, Items: items, SamplesS: samples, MedianS: percentile(samples, 50)}
}

func withBytes(r record, n int) record {
	b := uint64(n)
	r.Bytes = &b
	return r
}

// timeRuns calls f once untimed, then runs times, in seconds.
func timeRuns(runs int, f func() error) ([]float64, error) {
	if err := f(); err != nil {
		return nil, err
	}
	if runs < 1 {
		runs = 1
	}
	out := make([]float64, 0, runs)
	for i := 0; i < runs; i++ {
		start := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start).Seconds())
	}
	return out, nil
}

func serializer() *k8sjson.Serializer {
	return k8sjson.NewSerializerWithOptions(k8sjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, k8sjson.SerializerOptions{})
}

func codec(data []byte, runs int) ([]record, error) {
	var list corev1.PodList
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("encoding/json decode: %w", err)
	}
	items := uint64(len(list.Items))
	var out []record

	s, err := timeRuns(runs, func() error {
		var l corev1.PodList
		return json.Unmarshal(data, &l)
	})
	if err != nil {
		return nil, err
	}
	out = append(out, withBytes(timed("decode-podlist", "client-go", items, s), len(data)))

	dec := scheme.Codecs.UniversalDeserializer()
	s, err = timeRuns(runs, func() error {
		obj, _, err := dec.Decode(data, nil, &corev1.PodList{})
		if err != nil {
			return err
		}
		if n := len(obj.(*corev1.PodList).Items); uint64(n) != items {
			return fmt.Errorf("apimachinery decoded %d of %d pods", n, items)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("apimachinery decode: %w", err)
	}
	out = append(out, withBytes(timed("decode-podlist", "client-go (apimachinery)", items, s), len(data)))

	encoded, err := json.Marshal(&list)
	if err != nil {
		return nil, err
	}
	s, err = timeRuns(runs, func() error {
		_, err := json.Marshal(&list)
		return err
	})
	if err != nil {
		return nil, err
	}
	out = append(out, withBytes(timed("encode-podlist", "client-go", items, s), len(encoded)))

	ser := serializer()
	var buf bytes.Buffer
	if err := ser.Encode(&list, &buf); err != nil {
		return nil, fmt.Errorf("apimachinery encode: %w", err)
	}
	n := buf.Len()
	s, err = timeRuns(runs, func() error {
		buf.Reset()
		return ser.Encode(&list, &buf)
	})
	if err != nil {
		return nil, err
	}
	out = append(out, withBytes(timed("encode-podlist", "client-go (apimachinery)", items, s), n))
	return out, nil
}

// decodeWatch runs client-go's watch pipeline (JSON framer, streaming
// decoder into metav1.WatchEvent, embedded object decoder,
// StreamWatcher) over data; the number of events.
func decodeWatch(data []byte) (int, error) {
	ser := serializer()
	frames := k8sjson.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(data)))
	events := streaming.NewDecoder(frames, ser)
	return countPods(events)
}

// countPods reads every event of a watch-event decoder through client-go's
// rest/watch decoder (UniversalDeserializer for the object) and
// StreamWatcher; the number of Pod events.
func countPods(events streaming.Decoder) (int, error) {
	dec := restwatch.NewDecoder(events, scheme.Codecs.UniversalDeserializer())
	w := watch.NewStreamWatcher(dec, apierrors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding"))
	n := 0
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return n, fmt.Errorf("watch error event: %v", ev.Object)
		}
		if _, ok := ev.Object.(*corev1.Pod); !ok {
			return n, fmt.Errorf("event %d is a %T", n, ev.Object)
		}
		n++
	}
	return n, nil
}

func watchBench(data []byte, runs int) ([]record, error) {
	return timeEvents("decode-watch", data, bytes.Count(data, []byte{'\n'}), runs, decodeWatch)
}

// timeEvents times runs decodes of the want events of a watch stream and
// checks that each decode yields them all.
func timeEvents(bench string, data []byte, want, runs int, decode func([]byte) (int, error)) ([]record, error) {
	s, err := timeRuns(runs, func() error {
		n, err := decode(data)
		if err != nil {
			return err
		}
		if n != want {
			return fmt.Errorf("client-go decoded %d of %d events", n, want)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []record{withBytes(timed(bench, "client-go", uint64(want), s), len(data))}, nil
}

func roundtrip(url string, seq, conc, total int) ([]record, error) {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: url, QPS: -1})
	if err != nil {
		return nil, err
	}
	cms := cs.CoreV1().ConfigMaps("default")
	ctx := context.Background()
	get := func() error {
		_, err := cms.Get(ctx, "bench", metav1.GetOptions{})
		return err
	}
	warm := seq
	if warm > 200 {
		warm = 200
	}
	for i := 0; i < warm; i++ {
		if err := get(); err != nil {
			return nil, err
		}
	}
	lat := make([]float64, 0, seq)
	cpu := cpuS()
	start := time.Now()
	for i := 0; i < seq; i++ {
		t := time.Now()
		if err := get(); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t).Seconds())
	}
	r := timed("get-sequential", "client-go", uint64(len(lat)), []float64{time.Since(start).Seconds()})
	p50, p99 := percentile(lat, 50)*1e6, percentile(lat, 99)*1e6
	r.P50Us, r.P99Us = &p50, &p99
	r.CPUS = cpuSince(cpu)

	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	cpu = cpuS()
	start = time.Now()
	for i := 0; i < conc; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(total) {
				if err := get(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	c := timed("get-concurrent", "client-go", uint64(total), []float64{elapsed})
	c.CPUS = cpuSince(cpu)
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return []record{r, c}, nil
}

// cacheBench fills a SharedInformer's indexer with every Pod at url,
// prints "synced", then waits for updates UpdateFunc calls and reports the
// process's peak RSS (VmHWM).
// With protobuf, the client asks for application/vnd.kubernetes.protobuf
// (list and watch), as kube-controller-manager's clients do.
func cacheBench(url string, updates int, protobuf bool) ([]record, error) {
	config := &rest.Config{Host: url, QPS: -1}
	if protobuf {
		config.ContentType = runtime.ContentTypeProtobuf
	}
	cs, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Core().V1().Pods().Informer()
	var synced atomic.Bool
	var seen atomic.Int64
	done := make(chan struct{})
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, _ interface{}) {
			if synced.Load() && seen.Add(1) == int64(updates) {
				close(done)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	defer close(stop)
	start := time.Now()
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		return nil, fmt.Errorf("informer did not sync")
	}
	synced.Store(true)
	fmt.Println("synced")
	if updates > 0 {
		select {
		case <-done:
		case <-time.After(10 * time.Minute):
			return nil, fmt.Errorf("saw %d of %d updates", seen.Load(), updates)
		}
	}
	r := timed("cache-memory", "client-go", uint64(len(inf.GetStore().ListKeys())), []float64{time.Since(start).Seconds()})
	r.PeakKiB = peakRSSKiB()
	r.Variant = "full"
	if protobuf {
		r.Variant = "full, protobuf"
	}
	return []record{r}, nil
}

func atoi(args []string, i int) int {
	if i >= len(args) {
		usage()
	}
	n, err := strconv.Atoi(args[i])
	if err != nil {
		usage()
	}
	return n
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kubeset-bench-go codec FILE RUNS | watch STREAM RUNS | roundtrip URL SEQ CONC TOTAL | cache URL UPDATES [protobuf] | scale URL UPDATES [protobuf] | "+
		"to-protobuf PODLIST OUT | codec-protobuf FILE RUNS [KUBESET] | watch-to-protobuf STREAM OUT | watch-protobuf STREAM RUNS")
	os.Exit(2)
}

func main() {
	args := os.Args[1:]
	if len(args) < 3 {
		usage()
	}
	if args[0] == "scale" {
		runScale(args)
		return
	}
	var out []record
	var err error
	switch args[0] {
	case "codec", "watch":
		var data []byte
		data, err = os.ReadFile(args[1])
		if err == nil && args[0] == "codec" {
			out, err = codec(data, atoi(args, 2))
		} else if err == nil {
			out, err = watchBench(data, atoi(args, 2))
		}
	case "cache":
		out, err = cacheBench(args[1], atoi(args, 2), len(args) > 3 && args[3] == "protobuf")
	case "to-protobuf":
		err = toProtobuf(args[1], args[2])
	case "watch-to-protobuf":
		err = watchToProtobuf(args[1], args[2])
	case "codec-protobuf", "watch-protobuf":
		var data []byte
		data, err = os.ReadFile(args[1])
		if err == nil && args[0] == "codec-protobuf" {
			other := ""
			if len(args) > 3 {
				other = args[3]
			}
			out, err = codecProtobuf(data, atoi(args, 2), other)
		} else if err == nil {
			out, err = watchProtobufBench(data, atoi(args, 2))
		}
	case "roundtrip":
		out, err = roundtrip(args[1], atoi(args, 2), atoi(args, 3), atoi(args, 4))
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	if args[0] == "to-protobuf" || args[0] == "watch-to-protobuf" {
		return // converters write a file, no records
	}
	text, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	fmt.Println(string(text))
}
