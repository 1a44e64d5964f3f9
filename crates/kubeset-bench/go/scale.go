package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// scaleRecord is the scale row's record, in the shape of the Rust crate's
// scale::ScaleRecord.
type scaleRecord struct {
	Bench        string   `json:"bench"`
	Impl         string   `json:"impl"`
	Variant      string   `json:"variant"`
	Items        uint64   `json:"items"`
	Updates      uint64   `json:"updates"`
	SyncS        float64  `json:"sync_s"`
	UpdatesS     float64  `json:"updates_s"`
	CPUS         *float64 `json:"cpu_s"`
	BaseKiB      *uint64  `json:"base_rss_kib"`
	SyncedKiB    *uint64  `json:"synced_rss_kib"`
	PeakKiB      *uint64  `json:"peak_rss_kib"`
	SteadyRSSKiB *uint64  `json:"steady_rss_kib"`
}

// rssKiB is VmRSS from /proc/self/status.
func rssKiB() *uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return nil
			}
			return &n
		}
	}
	return nil
}

// scaleBench is the scale row's client-go client: a SharedInformerFactory
// Pod informer (default settings) started cold; prints "synced" once
// HasSynced, then waits for updates UpdateFunc calls (30 min at most).
func scaleBench(url string, updates int, protobuf bool) ([]scaleRecord, error) {
	base := rssKiB()
	start := time.Now()
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
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		return nil, fmt.Errorf("informer did not sync")
	}
	synced.Store(true)
	syncS := time.Since(start).Seconds()
	syncedKiB := rssKiB()
	fmt.Println("synced")
	at := time.Now()
	if updates > 0 {
		select {
		case <-done:
		case <-time.After(30 * time.Minute):
			return nil, fmt.Errorf("saw %d of %d updates", seen.Load(), updates)
		}
	}
	r := scaleRecord{
		Bench:        "scale",
		Impl:         "client-go",
		Variant:      "json",
		Items:        uint64(len(inf.GetStore().ListKeys())),
		Updates:      uint64(updates),
		SyncS:        syncS,
		UpdatesS:     time.Since(at).Seconds(),
		BaseKiB:      base,
		SyncedKiB:    syncedKiB,
		SteadyRSSKiB: rssKiB(),
		PeakKiB:      peakRSSKiB(),
		CPUS:         cpuSince(0),
	}
	if protobuf {
		r.Variant = "protobuf"
	}
	return []scaleRecord{r}, nil
}

// runScale runs `scale URL UPDATES [protobuf]` and prints its record.
func runScale(args []string) {
	out, err := scaleBench(args[1], atoi(args, 2), len(args) > 3 && args[3] == "protobuf")
	if err == nil {
		var text []byte
		text, err = json.Marshal(out)
		fmt.Println(string(text))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
