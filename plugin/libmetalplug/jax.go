//go:build !nojax

package main

import _ "github.com/metalplug/metalplug/plugin/pjrt" // GetPjrtApi
