// promtool for the monitoring tests, built by factstream_lab/stack/promtool.py (go build in a
// copy of this module). Prometheus v0.316.0 (3.16) asks for three dependency versions the Go
// module proxy does not serve; they are replaced by the ones Prometheus v0.315.0 used. Older
// releases cannot be built with `go install` at all (replace/exclude directives).
module factstream.local/promtool

go 1.26.7

require github.com/prometheus/prometheus v0.316.0

replace (
	github.com/google/pprof => github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	github.com/hashicorp/nomad/api => github.com/hashicorp/nomad/api v0.0.0-20260907080526-08ef8f3d26da
	github.com/prometheus/client_golang/exp => github.com/prometheus/client_golang/exp v0.0.0-20260907100614-57bb367da472
)
