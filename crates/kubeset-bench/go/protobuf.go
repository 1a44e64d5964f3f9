// The protobuf side of the Go peer: PodList decode/encode and the watch
// stream in application/vnd.kubernetes.protobuf, as client-go speaks it
// with `ContentType: "application/vnd.kubernetes.protobuf"`.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/client-go/kubernetes/scheme"
)

// protobufInfo is the protobuf entry of client-go's codec factory: its
// Serializer writes `k8s\0` + runtime.Unknown, its StreamSerializer is the
// raw (no envelope) serializer with the 4-byte length framer.
func protobufInfo() (runtime.SerializerInfo, error) {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok || info.StreamSerializer == nil {
		return info, fmt.Errorf("client-go has no %s serializer", runtime.ContentTypeProtobuf)
	}
	return info, nil
}

// toProtobuf reads a JSON PodList and writes it in protobuf, as
// kube-apiserver answers a list (Go's encoder, with the envelope).
func toProtobuf(in, out string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var list corev1.PodList
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	info, err := protobufInfo()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	if err := enc.Encode(&list, &buf); err != nil {
		return fmt.Errorf("protobuf encode: %w", err)
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// decodePodList decodes protobuf bytes as client-go decodes a list body.
func decodePodList(data []byte) (*corev1.PodList, error) {
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, &corev1.PodList{})
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*corev1.PodList)
	if !ok {
		return nil, fmt.Errorf("decoded a %T, not a PodList", obj)
	}
	return list, nil
}

// agree checks kubeset's encoding (file other) of the list Go wrote as
// data: Go decodes it to a list equal to its own, and encodes that list
// back to exactly data, byte for byte.
func agree(data []byte, list *corev1.PodList, other string, enc runtime.Encoder) error {
	theirs, err := os.ReadFile(other)
	if err != nil {
		return err
	}
	back, err := decodePodList(theirs)
	if err != nil {
		return fmt.Errorf("%s: protobuf decode: %w", other, err)
	}
	if !reflect.DeepEqual(back, list) {
		return fmt.Errorf("%s decodes to another PodList than Go's own bytes", other)
	}
	var buf bytes.Buffer
	if err := enc.Encode(back, &buf); err != nil {
		return err
	}
	if !bytes.Equal(buf.Bytes(), data) {
		return fmt.Errorf("Go re-encodes %s to other bytes than its own", other)
	}
	fmt.Fprintf(os.Stderr, "protobuf agreement: Go reads kubeset's %d bytes and writes back its own %d\n", len(theirs), len(data))
	return nil
}

// codecProtobuf times client-go's protobuf decode and encode of a PodList.
// When other is set (kubeset's encoding of the same list), it must agree
// first (see agree).
func codecProtobuf(data []byte, runs int, other string) ([]record, error) {
	list, err := decodePodList(data)
	if err != nil {
		return nil, fmt.Errorf("protobuf decode: %w", err)
	}
	items := uint64(len(list.Items))
	info, err := protobufInfo()
	if err != nil {
		return nil, err
	}
	enc := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	if other != "" {
		if err := agree(data, list, other, enc); err != nil {
			return nil, err
		}
	}
	var out []record
	s, err := timeRuns(runs, func() error {
		l, err := decodePodList(data)
		if err == nil && uint64(len(l.Items)) != items {
			err = fmt.Errorf("decoded %d of %d pods", len(l.Items), items)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	out = append(out, withBytes(timed("decode-podlist-protobuf", "client-go", items, s), len(data)))

	var buf bytes.Buffer
	if err := enc.Encode(list, &buf); err != nil {
		return nil, err
	}
	n := buf.Len()
	s, err = timeRuns(runs, func() error {
		buf.Reset()
		return enc.Encode(list, &buf)
	})
	if err != nil {
		return nil, err
	}
	out = append(out, withBytes(timed("encode-podlist-protobuf", "client-go", items, s), n))
	return out, nil
}

// watchToProtobuf converts a JSON watch stream (one event per line) to
// the protobuf stream kube-apiserver writes for `Accept:
// application/vnd.kubernetes.protobuf;stream=watch` (its watchEncoder):
// the object encoded with the envelope into a metav1.WatchEvent's
// RawExtension, the event by the raw stream serializer, each framed by
// the length-delimited framer (4-byte big-endian length, then the bytes).
func watchToProtobuf(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := protobufInfo()
	if err != nil {
		return err
	}
	embedded := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	encoder := info.StreamSerializer.Serializer
	var stream bytes.Buffer
	frames := info.StreamSerializer.Framer.NewFrameWriter(&stream)
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 1<<20), 64<<20)
	var obj, event bytes.Buffer
	for lines.Scan() {
		var ev struct {
			Type   string     `json:"type"`
			Object corev1.Pod `json:"object"`
		}
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			return err
		}
		obj.Reset()
		if err := embedded.Encode(&ev.Object, &obj); err != nil {
			return err
		}
		event.Reset()
		out := &metav1.WatchEvent{Type: ev.Type, Object: runtime.RawExtension{Raw: obj.Bytes()}}
		if err := encoder.Encode(out, &event); err != nil {
			return err
		}
		if _, err := frames.Write(event.Bytes()); err != nil {
			return err
		}
	}
	if err := lines.Err(); err != nil {
		return err
	}
	return os.WriteFile(out, stream.Bytes(), 0o644)
}

// countFrames is the number of length-delimited frames in data.
func countFrames(data []byte) (int, error) {
	n := 0
	for at := 0; at < len(data); n++ {
		if len(data)-at < 4 {
			return n, fmt.Errorf("truncated frame header at %d", at)
		}
		size := int(binary.BigEndian.Uint32(data[at:]))
		at += 4 + size
		if at > len(data) {
			return n, fmt.Errorf("truncated frame %d", n)
		}
	}
	return n, nil
}

// decodeWatchProtobuf runs client-go's protobuf watch pipeline (the
// length-delimited framer, the raw stream serializer into
// metav1.WatchEvent, the embedded object decoder, StreamWatcher); the
// number of events.
func decodeWatchProtobuf(data []byte) (int, error) {
	info, err := protobufInfo()
	if err != nil {
		return 0, err
	}
	frames := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(data)))
	events := streaming.NewDecoder(frames, info.StreamSerializer.Serializer)
	return countPods(events)
}

func watchProtobufBench(data []byte, runs int) ([]record, error) {
	want, err := countFrames(data)
	if err != nil {
		return nil, err
	}
	return timeEvents("decode-watch-protobuf", data, want, runs, decodeWatchProtobuf)
}
