module github.com/metalplug/metalplug

go 1.26

tool (
	github.com/magefile/mage
	google.golang.org/protobuf/cmd/protoc-gen-go
)

require (
	github.com/Masterminds/semver/v3 v3.5.0
	github.com/magefile/mage v1.17.2
	github.com/progrium/darwinkit v0.5.0
	gonum.org/v1/gonum v0.17.0
	google.golang.org/protobuf v1.36.12
)
