// Command protocheck is the Go side of kubeset's protobuf agreement test
// (crates/kubeset-api/tests/protobuf_go.rs), built in the bench's Go module
// with k8s.io/api and client-go's scheme.
//
// Usage: protocheck DIR. For every NAME.json in DIR (a built-in object)
// it writes NAME.go.pb (Go's protobuf encoding, with the k8s\0 envelope)
// and NAME.go.json (Go's JSON of the same object), NAME.gopb.json (Go's
// JSON of what it decodes from its own protobuf: what protobuf carries of
// the object, e.g. no empty-but-present lists); for every NAME.rs.pb
// (kubeset's protobuf encoding) it writes NAME.rs.json (Go's JSON of what
// it decoded). A failure to decode is an error naming the file.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: protocheck DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	js := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, json.SerializerOptions{})
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	for _, file := range files {
		name := strings.TrimSuffix(file, ".json")
		if strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".rs") {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		obj, _, err := js.Decode(data, nil, nil)
		if err != nil {
			return fmt.Errorf("%s: JSON: %w", file, err)
		}
		if err := write(pb, obj, name+".go.pb"); err != nil {
			return err
		}
		if err := write(js, obj, name+".go.json"); err != nil {
			return err
		}
		if err := reread(pb, js, name+".go.pb", name+".gopb.json"); err != nil {
			return err
		}
		if err := reread(pb, js, name+".rs.pb", name+".rs.json"); err != nil {
			return err
		}
	}
	return nil
}

// reread decodes protobuf file from and writes its JSON to file to.
func reread(pb runtime.Decoder, js runtime.Encoder, from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	obj, _, err := pb.Decode(data, nil, nil)
	if err != nil {
		return fmt.Errorf("%s: protobuf: %w", from, err)
	}
	return write(js, obj, to)
}

func write(s runtime.Encoder, obj runtime.Object, file string) error {
	var buf bytes.Buffer
	if err := s.Encode(obj, &buf); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}
