// Command libmetalplug is built with -buildmode=c-shared into the one library
// TensorFlow loads from site-packages/tensorflow-plugins and jax from the
// jax_plugins.metalplug module. Its exports come from the frontends it links:
// both by default; the build leaves out the one whose framework is not
// installed (tags notf and nojax), so that a JAX-only build needs no
// TensorFlow and a TensorFlow-only build no jaxlib.
package main

func main() {}
