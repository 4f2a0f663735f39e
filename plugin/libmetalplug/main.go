// Command libmetalplug is built with -buildmode=c-shared into the library
// TensorFlow loads from site-packages/tensorflow-plugins. Its exports come
// from the frontend packages it links.
package main

import _ "github.com/metalplug/metalplug/plugin/tf"

func main() {}
