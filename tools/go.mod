module github.com/metalplug/metalplug/tools

go 1.26

require (
	github.com/google/go-github/v62 v62.0.0
	github.com/metalplug/metalplug v0.0.0-00010101000000-000000000000
)

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/google/go-querystring v1.1.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

// The tools build on the root module's packages as they are in this tree.
replace github.com/metalplug/metalplug => ../
