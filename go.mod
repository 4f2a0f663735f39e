module github.com/metalplug/metalplug

go 1.26

tool github.com/magefile/mage

require (
	github.com/Masterminds/semver/v3 v3.5.0
	github.com/magefile/mage v1.17.2
	github.com/progrium/darwinkit v0.5.0
)
