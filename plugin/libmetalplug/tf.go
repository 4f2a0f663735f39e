//go:build !notf

package main

import _ "github.com/metalplug/metalplug/plugin/tf" // SE_InitPlugin, TF_InitKernel
