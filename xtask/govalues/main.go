// Command govalues writes which optional scalar fields of the built-in
// types are Go values (not pointers) with `omitempty`: Go's protobuf
// encoder writes such a field even when it is zero, while its JSON omits
// it, so kubeset's protobuf decoder reads a zero there as unset. Every
// other field keeps the presence it has on the wire (a pointer's zero is
// meaningful: `replicas: 0`).
//
// It walks every type of client-go's scheme (k8s.io/api and the meta types
// of k8s.io/apimachinery), of apiextensions-apiserver and of
// kube-aggregator by reflection and prints one line per struct,
// named as its OpenAPI definition (`io.k8s.api.core.v1.PodSpec`), followed
// by the JSON names of those fields, sorted. Fields of an embedded struct
// (`json:",inline"`) belong to the struct that embeds it, as in OpenAPI.
//
// `cargo xtask go-values` runs it (its own Go module, so that the bench's
// module does not carry the apiserver's dependencies) and writes
// specs/kubernetes-<v>.go-values.
package main

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
)

func main() {
	seen := map[reflect.Type]bool{}
	lines := map[string][]string{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
			if t.Kind() == reflect.Map {
				visit(t.Key())
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		name, ok := definition(t)
		fields := valueFields(t, visit)
		if ok {
			lines[name] = fields
		}
	}
	for _, add := range []func(*runtime.Scheme) error{
		apiextensionsv1.AddToScheme, apiextensionsv1beta1.AddToScheme,
		apiregistrationv1.AddToScheme, apiregistrationv1beta1.AddToScheme,
	} {
		if err := add(scheme.Scheme); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
	}
	for _, t := range scheme.Scheme.AllKnownTypes() {
		visit(t)
	}
	// Meta types the scheme does not register but the API serves.
	for _, v := range []any{metav1.APIGroupList{}, metav1.APIResourceList{}, metav1.APIVersions{}, metav1.Patch{}, version.Info{}} {
		visit(reflect.TypeOf(v))
	}
	names := make([]string, 0, len(lines))
	for n := range lines {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Println(strings.TrimSpace(n + " " + strings.Join(lines[n], " ")))
	}
	if len(names) < 500 {
		fmt.Fprintf(os.Stderr, "only %d structs: is client-go's scheme complete?\n", len(names))
		os.Exit(1)
	}
}

// definition is the OpenAPI name of a Go type of k8s.io:
// k8s.io/api/core/v1.PodSpec → io.k8s.api.core.v1.PodSpec.
func definition(t reflect.Type) (string, bool) {
	pkg, ok := strings.CutPrefix(t.PkgPath(), "k8s.io/")
	if !ok || t.Name() == "" {
		return "", false
	}
	return "io.k8s." + strings.ReplaceAll(pkg, "/", ".") + "." + t.Name(), true
}

// valueFields lists the JSON names of t's scalar value fields with
// omitempty (embedded inline structs included) and visits every struct
// type t refers to.
func valueFields(t reflect.Type, visit func(reflect.Type)) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, valueFields(f.Type, visit)...)
			continue
		}
		visit(f.Type)
		if name == "" || !hasOpt(opts, "omitempty") || !scalar(f.Type.Kind()) {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

func scalar(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
