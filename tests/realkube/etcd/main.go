// Command etcd runs the etcd server from go.etcd.io/etcd/server/v3, exactly as
// the upstream etcd binary does. It exists because the upstream binary's own
// module (go.etcd.io/etcd/v3) replaces its sibling modules with local folders
// and so cannot be built from the module proxy directly.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
