// Command testlib is a c-shared library of the PJRT frontend alone, for
// plugin/pjrt's end-to-end test with a real jax: it needs no TensorFlow,
// unlike plugin/libmetalplug's default build, which links both frontends.
//
//	go build -buildmode=c-shared -o libmetalplug.so ./plugin/pjrt/internal/testlib
package main

import _ "github.com/metalplug/metalplug/plugin/pjrt"

func main() {}
