package docs

// Reason is why an op TensorFlow registers for its GPU should never have a
// kernel of ours. The list is short and fixed: an op we merely lack is
// "missing", never excluded.
type Reason string

const (
	// HostSide ops do their work on the host by nature: tf.data's datasets,
	// iterators and optionals, whose GPU kernels only pass variant handles
	// through so that a pipeline can end on the GPU.
	HostSide Reason = "host-side"
	// Collective ops communicate between several devices (NCCL, collective
	// ops); the plugin offers one device per process.
	Collective Reason = "collective"
	// CuDNNRNN kernels are calls into cuDNN's fused RNNs, with cuDNN's own
	// opaque parameter layout; Keras runs its RNN layers as ordinary ops
	// where cuDNN is not there.
	CuDNNRNN Reason = "cudnn-rnn"
	// RefVariable ops read or write a TF1 reference variable (an input or
	// output of reference type): TF2 makes only resource variables, so no
	// TF2 program builds them. Read from the ops' definitions, not listed.
	RefVariable Reason = "reference-variable"
	// Removed ops were deprecated at a GraphDef version older than the one
	// TensorFlow builds, which it refuses to build ("not available in
	// GraphDef version"). Read from the ops' definitions, not listed.
	Removed Reason = "removed"
	// Internal ops are TensorFlow's own (an underscore name, put in a graph
	// by TensorFlow's rewrites, never by a program) or XLA's, which run only
	// inside XLA's compiled clusters.
	Internal Reason = "internal"
)

// ReasonInfo is a reason and what it means to a reader.
type ReasonInfo struct {
	Reason Reason
	Means  string
	// FromDefinition: the op's definition in the snapshot decides it, so
	// the Exclusions table may not give it.
	FromDefinition bool
}

// Reasons is the fixed list, in the order the document shows it.
var Reasons = []ReasonInfo{
	{HostSide, "host-side by nature: tf.data datasets, iterators and optionals, and host-only utilities", false},
	{Collective, "multi-device collectives (NCCL, collective ops): the plugin offers one device per process", false},
	{CuDNNRNN, "cuDNN's fused RNN kernels, with cuDNN's opaque weight layout", false},
	{RefVariable, "reads or writes a TF1 reference variable, which no TF2 program makes (from the op's definition)", true},
	{Removed, "deprecated at an older GraphDef version: TensorFlow refuses to build it (from the op's definition)", true},
	{Internal, "TensorFlow-internal (put in graphs by TensorFlow's own rewrites) or XLA's", false},
}

// Exclusions are the ops excluded by judgment, with the reason; ops with a
// reference argument, and ops TensorFlow no longer builds, are excluded
// from what their definitions say in the snapshot (RefVariable, Removed)
// and are not listed here. A test holds the table to the snapshot: every
// op has a GPU kernel there, none is ours or inherited, none is excluded by
// its definition too, and each internal one has an internal name.
var Exclusions = map[string]Reason{
	// tf.data: datasets and iterators run on the host; their GPU kernels
	// hand a variant through (prefetch_to_device, a dataset's options).
	"AnonymousIterator":          HostSide,
	"AnonymousIteratorV2":        HostSide,
	"AnonymousIteratorV3":        HostSide,
	"DataServiceDatasetV4":       HostSide,
	"DeleteIterator":             HostSide,
	"DummyIterationCounter":      HostSide,
	"ExperimentalMapDataset":     HostSide,
	"ExperimentalSleepDataset":   HostSide,
	"FinalizeDataset":            HostSide,
	"GeneratorDataset":           HostSide,
	"GetOptions":                 HostSide,
	"IteratorFromStringHandleV2": HostSide,
	"IteratorGetNext":            HostSide,
	"IteratorGetNextAsOptional":  HostSide,
	"IteratorGetNextSync":        HostSide,
	"IteratorToStringHandle":     HostSide,
	"IteratorV2":                 HostSide,
	"MakeIterator":               HostSide,
	"OptionalFromValue":          HostSide,
	"OptionalGetValue":           HostSide,
	"OptionalHasValue":           HostSide,
	"OptionalNone":               HostSide,
	"OptionsDataset":             HostSide,
	"PrefetchDataset":            HostSide,
	"SleepDataset":               HostSide,
	"UnwrapDatasetVariant":       HostSide,
	"WrapDatasetVariant":         HostSide,
	// A test utility that sleeps the calling thread.
	"SleepOp": HostSide,

	// Collectives across devices and hosts: NCCL and TensorFlow's
	// collective ops.
	"CollectiveAllToAllV3":             Collective,
	"CollectiveGather":                 Collective,
	"CollectiveInitializeCommunicator": Collective,
	"CollectiveReduce":                 Collective,
	"CollectiveReduceV3":               Collective,
	"NcclAllReduce":                    Collective,
	"NcclBroadcast":                    Collective,
	"NcclReduce":                       Collective,
	"_NcclBroadcastRecv":               Collective,
	"_NcclBroadcastSend":               Collective,
	"_NcclReduceRecv":                  Collective,
	"_NcclReduceSend":                  Collective,

	// cuDNN's RNNs: the kernels are cuDNN calls on a weight buffer in
	// cuDNN's layout, and the ops exist only for them.
	"CudnnRNN":                    CuDNNRNN,
	"CudnnRNNBackprop":            CuDNNRNN,
	"CudnnRNNBackpropV2":          CuDNNRNN,
	"CudnnRNNBackpropV3":          CuDNNRNN,
	"CudnnRNNCanonicalToParams":   CuDNNRNN,
	"CudnnRNNCanonicalToParamsV2": CuDNNRNN,
	"CudnnRNNParamsSize":          CuDNNRNN,
	"CudnnRNNParamsToCanonical":   CuDNNRNN,
	"CudnnRNNParamsToCanonicalV2": CuDNNRNN,
	"CudnnRNNV2":                  CuDNNRNN,
	"CudnnRNNV3":                  CuDNNRNN,

	// TensorFlow's own: host/device copies its runtime inserts, the halves
	// of ParallelConcat after its rewrite, Grappler's fusions of batch norm
	// with an activation, and a string hash its rewrites use.
	"_CopyFromGpuToHost":      Internal,
	"_CopyFromHostToGpu":      Internal,
	"_FusedBatchNormEx":       Internal,
	"_FusedBatchNormGradEx":   Internal,
	"_ParallelConcatStart":    Internal,
	"_ParallelConcatUpdate":   Internal,
	"_TensorToHashBucketFast": Internal,
	// XLA's ops: their kernels compile them with XLA (jit_compile clusters,
	// jax2tf's XlaCallModule), and the plugin has no XLA backend for
	// TensorFlow.
	"XlaBroadcastHelper":      Internal,
	"XlaCallModule":           Internal,
	"XlaConv":                 Internal,
	"XlaConvV2":               Internal,
	"XlaDequantize":           Internal,
	"XlaDot":                  Internal,
	"XlaDotV2":                Internal,
	"XlaDynamicSlice":         Internal,
	"XlaDynamicUpdateSlice":   Internal,
	"XlaEinsum":               Internal,
	"XlaGather":               Internal,
	"XlaIf":                   Internal,
	"XlaKeyValueSort":         Internal,
	"XlaLaunch":               Internal,
	"XlaOptimizationBarrier":  Internal,
	"XlaPad":                  Internal,
	"XlaRecv":                 Internal,
	"XlaReduce":               Internal,
	"XlaReducePrecision":      Internal,
	"XlaReduceWindow":         Internal,
	"XlaReplicaId":            Internal,
	"XlaRngBitGenerator":      Internal,
	"XlaScatter":              Internal,
	"XlaSelectAndScatter":     Internal,
	"XlaSelfAdjointEig":       Internal,
	"XlaSend":                 Internal,
	"XlaSharding":             Internal,
	"XlaSort":                 Internal,
	"XlaSpmdShardToFullShape": Internal,
	"XlaSvd":                  Internal,
	"XlaVariadicReduce":       Internal,
	"XlaVariadicReduceV2":     Internal,
	"XlaVariadicSort":         Internal,
	"XlaWhile":                Internal,
}
