/*
 * check-abi.c - sparkctl's NVIDIA declarations against the real headers.
 *
 * src/nv/ declares the types, constants and functions sparkctl uses, so
 * that it builds without any NVIDIA header.  Where the real cuda.h, nvml.h
 * and nccl.h are installed (HAVE_*_H, set by tests/fake/meson.build), this
 * program does not compile when a declaration disagrees with them: constant
 * values, buffer sizes, struct sizes and field offsets, and the function
 * pointer types sparkctl calls the resolved symbols through.  main() checks
 * what needs sparkctl's code: the decoding of NCCL's version codes.
 *
 * The function types cannot be compared with __builtin_types_compatible_p:
 * the real functions return enums (nvmlReturn_t, CUresult) where sparkctl
 * has int, and take nvmlPciInfo_t * where sparkctl passes its own struct,
 * which C calls incompatible although the calls are the same on the
 * machine.  The check is -Wcast-function-type instead, made an error here:
 * it lets an integer or enum stand for another of the same width and any
 * pointer for any pointer, and rejects everything else (another width, a
 * pointer for an integer, another number of parameters).  The structs
 * behind the pointers are compared field by field.
 */
#include "sparkctl.h"

/* NVIDIA's headers are not warning-clean (nvml.h has enumerators past INT_MAX). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#ifdef HAVE_CUDA_H
#include <cuda.h>
#endif
#ifdef HAVE_NVML_H
/* Also declares the unversioned functions, which sparkctl falls back to. */
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>
#endif
#ifdef HAVE_NCCL_H
#include <nccl.h>
#endif
#pragma GCC diagnostic pop

/*
 * sparkctl's headers reuse names of the real ones: take them in as
 * ours_NAME.  A name added there and missing here collides with the real
 * header, and the build fails until it is compared below.
 */
#define CUDA_SUCCESS			   ours_CUDA_SUCCESS
#define CUDA_ERROR_NO_DEVICE		   ours_CUDA_ERROR_NO_DEVICE
#define CUDA_ERROR_NOT_READY		   ours_CUDA_ERROR_NOT_READY
#define NVML_SUCCESS			   ours_NVML_SUCCESS
#define NVML_ERROR_UNINITIALIZED	   ours_NVML_ERROR_UNINITIALIZED
#define NVML_ERROR_INVALID_ARGUMENT	   ours_NVML_ERROR_INVALID_ARGUMENT
#define NVML_ERROR_NOT_SUPPORTED	   ours_NVML_ERROR_NOT_SUPPORTED
#define NVML_ERROR_NO_PERMISSION	   ours_NVML_ERROR_NO_PERMISSION
#define NVML_ERROR_INSUFFICIENT_SIZE	   ours_NVML_ERROR_INSUFFICIENT_SIZE
#define NVML_ERROR_DRIVER_NOT_LOADED	   ours_NVML_ERROR_DRIVER_NOT_LOADED
#define NVML_ERROR_FUNCTION_NOT_FOUND	   ours_NVML_ERROR_FUNCTION_NOT_FOUND
#define NVML_ERROR_LIB_RM_VERSION_MISMATCH ours_NVML_ERROR_LIB_RM_VERSION_MISMATCH
#define NVML_ERROR_TIMEOUT		   ours_NVML_ERROR_TIMEOUT
#define NVML_CLOCK_GRAPHICS		   ours_NVML_CLOCK_GRAPHICS
#define NVML_CLOCK_SM			   ours_NVML_CLOCK_SM
#define NVML_CLOCK_MEM			   ours_NVML_CLOCK_MEM
#define NVML_CLOCK_VIDEO		   ours_NVML_CLOCK_VIDEO
#define NVML_TEMPERATURE_GPU		   ours_NVML_TEMPERATURE_GPU
/* nccl.h's is a macro, which NCCL_CONFIG_INITIALIZER keeps using under our name. */
#ifdef NCCL_CONFIG_UNDEF_INT
enum {
	real_NCCL_CONFIG_UNDEF_INT = NCCL_CONFIG_UNDEF_INT
};
#undef NCCL_CONFIG_UNDEF_INT
#endif
#define NCCL_CONFIG_UNDEF_INT ours_NCCL_CONFIG_UNDEF_INT
#include "nv/cuda.h"
#include "nv/nccl.h"
#include "nv/nvml.h"
#include "bench/nccl_perf.h"
#undef CUDA_SUCCESS
#undef CUDA_ERROR_NO_DEVICE
#undef CUDA_ERROR_NOT_READY
#undef NVML_SUCCESS
#undef NVML_ERROR_UNINITIALIZED
#undef NVML_ERROR_INVALID_ARGUMENT
#undef NVML_ERROR_NOT_SUPPORTED
#undef NVML_ERROR_NO_PERMISSION
#undef NVML_ERROR_INSUFFICIENT_SIZE
#undef NVML_ERROR_DRIVER_NOT_LOADED
#undef NVML_ERROR_FUNCTION_NOT_FOUND
#undef NVML_ERROR_LIB_RM_VERSION_MISMATCH
#undef NVML_ERROR_TIMEOUT
#undef NVML_CLOCK_GRAPHICS
#undef NVML_CLOCK_SM
#undef NVML_CLOCK_MEM
#undef NVML_CLOCK_VIDEO
#undef NVML_TEMPERATURE_GPU

/* Our constant of the real header's name has its value. */
#define SAME_VALUE(name) SAME_CONST(ours_##name, name)
/* Our constant ours has the value of the real one (cast: comparing two enum types warns). */
#define SAME_CONST(ours, real)                                                                     \
	_Static_assert((long long)(ours) == (long long)(real), #ours " is not " #real)

#define SAME_TYPE(ours, real)                                                                      \
	_Static_assert(__builtin_types_compatible_p(ours, real), #ours " is not " #real)
/* The same size and alignment: all an int standing for an enum needs (a struct: SAME_FIELD too). */
#define SAME_SIZE(ours, real)                                                                      \
	_Static_assert(sizeof(ours) == sizeof(real) && _Alignof(ours) == _Alignof(real),           \
		       #ours " and " #real " differ in size")

/* Field a of struct ours is field b of struct real: the same offset, size and type. */
#define SAME_FIELD(ours, a, real, b)                                                               \
	_Static_assert(offsetof(ours, a) == offsetof(real, b) &&                                   \
			       sizeof(((ours *)0)->a) == sizeof(((real *)0)->b) &&                 \
			       __builtin_types_compatible_p(__typeof__(((ours *)0)->a),            \
							    __typeof__(((real *)0)->b)),           \
		       #ours "." #a " is not " #real "." #b)

/*
 * The function pointer member m of our struct s can hold the real function
 * f.  The assertion itself always holds: the check is the cast, which is an
 * error when the two function types differ at the machine level (see the
 * top of the file).
 */
#pragma GCC diagnostic error "-Wcast-function-type"
#define CALLS(s, m, f) CALLS_TYPE(__typeof__(((s *)0)->m), f)
#define CALLS_TYPE(type, f)                                                                        \
	_Static_assert(sizeof((type)&f) == sizeof(void (*)(void)), #type " cannot call " #f)

#ifdef HAVE_CUDA_H
/* The names sparkctl resolves must be the functions declared under them. */
#if defined(cuInit) || defined(cuDriverGetVersion) || defined(cuDeviceGetCount) ||                 \
	defined(cuDeviceGet) || defined(cuDeviceGetAttribute) || defined(cuDeviceGetName) ||       \
	defined(cuDeviceGetPCIBusId) || defined(cuGetErrorString)
#error "cuda.h maps a function sparkctl resolves by name to another version"
#endif

SAME_VALUE(CUDA_SUCCESS);
SAME_VALUE(CUDA_ERROR_NO_DEVICE);
SAME_VALUE(CUDA_ERROR_NOT_READY);
SAME_CONST(CU_STREAM_FLAG_NON_BLOCKING, CU_STREAM_NON_BLOCKING);
SAME_CONST(CU_ATTR_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SAME_CONST(CU_ATTR_INTEGRATED, CU_DEVICE_ATTRIBUTE_INTEGRATED);
SAME_CONST(CU_ATTR_PCI_BUS_ID, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
SAME_CONST(CU_ATTR_PCI_DEVICE_ID, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
SAME_CONST(CU_ATTR_PCI_DOMAIN_ID, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
SAME_CONST(CU_ATTR_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME_CONST(CU_ATTR_COMPUTE_CAPABILITY_MINOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SAME_CONST(CU_ATTR_GPU_DIRECT_RDMA_SUPPORTED, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED);
SAME_CONST(CU_ATTR_DMA_BUF_SUPPORTED, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);

SAME_SIZE(cu_result, CUresult);
SAME_SIZE(enum cu_device_attribute, CUdevice_attribute);
SAME_TYPE(cu_device, CUdevice);
SAME_TYPE(cu_deviceptr, CUdeviceptr);
SAME_TYPE(cu_context, CUcontext);
SAME_TYPE(cu_stream, CUstream);
SAME_TYPE(cu_module, CUmodule);
SAME_TYPE(cu_function, CUfunction);
SAME_TYPE(cu_event, CUevent);
SAME_CONST(CU_JIT_OPTION_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER);
SAME_CONST(CU_JIT_OPTION_ERROR_LOG_BUFFER_SIZE, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);

CALLS(struct cuda, init, cuInit);
CALLS(struct cuda, driver_get_version, cuDriverGetVersion);
CALLS(struct cuda, device_get_count, cuDeviceGetCount);
CALLS(struct cuda, device_get, cuDeviceGet);
CALLS(struct cuda, device_get_attribute, cuDeviceGetAttribute);
CALLS(struct cuda, device_get_name, cuDeviceGetName);
CALLS(struct cuda, device_get_pci_bus_id, cuDeviceGetPCIBusId);
CALLS(struct cuda, get_error_string, cuGetErrorString);
/* The _v2 names cuda.c resolves are the ones cuda.h maps the calls to. */
CALLS(struct cuda, primary_ctx_retain, cuDevicePrimaryCtxRetain);
CALLS(struct cuda, primary_ctx_release, cuDevicePrimaryCtxRelease_v2);
CALLS(struct cuda, ctx_set_current, cuCtxSetCurrent);
CALLS(struct cuda, mem_alloc, cuMemAlloc_v2);
CALLS(struct cuda, mem_free, cuMemFree_v2);
CALLS(struct cuda, mem_get_info, cuMemGetInfo_v2);
CALLS(struct cuda, memcpy_htod, cuMemcpyHtoD_v2);
CALLS(struct cuda, memcpy_dtoh, cuMemcpyDtoH_v2);
CALLS(struct cuda, memset_d8, cuMemsetD8_v2);
CALLS(struct cuda, stream_create, cuStreamCreate);
CALLS(struct cuda, stream_destroy, cuStreamDestroy_v2);
CALLS(struct cuda, stream_query, cuStreamQuery);
CALLS(struct cuda, stream_synchronize, cuStreamSynchronize);
CALLS(struct cuda, event_create, cuEventCreate);
CALLS(struct cuda, event_record, cuEventRecord);
CALLS(struct cuda, event_query, cuEventQuery);
CALLS(struct cuda, event_elapsed_time, cuEventElapsedTime);
CALLS(struct cuda, event_destroy, cuEventDestroy_v2);
CALLS(struct cuda, module_load_data_ex, cuModuleLoadDataEx);
CALLS(struct cuda, module_get_function, cuModuleGetFunction);
CALLS(struct cuda, module_unload, cuModuleUnload);
CALLS(struct cuda, launch_kernel, cuLaunchKernel);
#endif

#ifdef HAVE_NVML_H
SAME_VALUE(NVML_SUCCESS);
SAME_VALUE(NVML_ERROR_UNINITIALIZED);
SAME_VALUE(NVML_ERROR_INVALID_ARGUMENT);
SAME_VALUE(NVML_ERROR_NOT_SUPPORTED);
SAME_VALUE(NVML_ERROR_NO_PERMISSION);
SAME_VALUE(NVML_ERROR_INSUFFICIENT_SIZE);
SAME_VALUE(NVML_ERROR_DRIVER_NOT_LOADED);
SAME_VALUE(NVML_ERROR_FUNCTION_NOT_FOUND);
SAME_VALUE(NVML_ERROR_LIB_RM_VERSION_MISMATCH);
SAME_VALUE(NVML_ERROR_TIMEOUT);
SAME_VALUE(NVML_CLOCK_GRAPHICS);
SAME_VALUE(NVML_CLOCK_SM);
SAME_VALUE(NVML_CLOCK_MEM);
SAME_VALUE(NVML_CLOCK_VIDEO);
SAME_VALUE(NVML_TEMPERATURE_GPU);
SAME_CONST(NVML_EVENT_TYPE_XID_CRITICAL_ERROR, nvmlEventTypeXidCriticalError);

/* sparkctl's buffers hold the longest string of each query (the _V2 sizes). */
SAME_CONST(NVML_DRIVER_VERSION_SIZE, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
SAME_CONST(NVML_NAME_SIZE, NVML_DEVICE_NAME_V2_BUFFER_SIZE);
SAME_CONST(NVML_UUID_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE);

SAME_SIZE(nvml_return, nvmlReturn_t);
SAME_TYPE(nvml_device, nvmlDevice_t);

SAME_SIZE(struct nvml_pci_info, nvmlPciInfo_t);
SAME_FIELD(struct nvml_pci_info, bus_id_legacy, nvmlPciInfo_t, busIdLegacy);
SAME_FIELD(struct nvml_pci_info, domain, nvmlPciInfo_t, domain);
SAME_FIELD(struct nvml_pci_info, bus, nvmlPciInfo_t, bus);
SAME_FIELD(struct nvml_pci_info, device, nvmlPciInfo_t, device);
SAME_FIELD(struct nvml_pci_info, pci_device_id, nvmlPciInfo_t, pciDeviceId);
SAME_FIELD(struct nvml_pci_info, pci_subsystem_id, nvmlPciInfo_t, pciSubSystemId);
SAME_FIELD(struct nvml_pci_info, bus_id, nvmlPciInfo_t, busId);
SAME_CONST(sizeof(((struct nvml_pci_info *)0)->bus_id), NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE);
SAME_CONST(sizeof(((struct nvml_pci_info *)0)->bus_id_legacy),
	   NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE);

SAME_SIZE(struct nvml_memory, nvmlMemory_t);
SAME_FIELD(struct nvml_memory, total, nvmlMemory_t, total);
SAME_FIELD(struct nvml_memory, free, nvmlMemory_t, free);
SAME_FIELD(struct nvml_memory, used, nvmlMemory_t, used);
SAME_SIZE(struct nvml_memory_v2, nvmlMemory_v2_t);
SAME_FIELD(struct nvml_memory_v2, version, nvmlMemory_v2_t, version);
SAME_FIELD(struct nvml_memory_v2, total, nvmlMemory_v2_t, total);
SAME_FIELD(struct nvml_memory_v2, reserved, nvmlMemory_v2_t, reserved);
SAME_FIELD(struct nvml_memory_v2, free, nvmlMemory_v2_t, free);
SAME_FIELD(struct nvml_memory_v2, used, nvmlMemory_v2_t, used);
SAME_CONST(NVML_MEMORY_V2, nvmlMemory_v2);

/* Each name nvml.c tries, newest first. */
CALLS(struct nvml, init, nvmlInit_v2);
CALLS(struct nvml, init, nvmlInit);
CALLS(struct nvml, shutdown, nvmlShutdown);
CALLS(struct nvml, error_string, nvmlErrorString);
CALLS(struct nvml, system_get_driver_version, nvmlSystemGetDriverVersion);
CALLS(struct nvml, system_get_cuda_driver_version, nvmlSystemGetCudaDriverVersion_v2);
CALLS(struct nvml, system_get_cuda_driver_version, nvmlSystemGetCudaDriverVersion);
CALLS(struct nvml, device_get_count, nvmlDeviceGetCount_v2);
CALLS(struct nvml, device_get_handle_by_index, nvmlDeviceGetHandleByIndex_v2);
CALLS(struct nvml, device_get_name, nvmlDeviceGetName);
CALLS(struct nvml, device_get_uuid, nvmlDeviceGetUUID);
CALLS(struct nvml, device_get_pci_info, nvmlDeviceGetPciInfo_v3);
CALLS(struct nvml, device_get_pci_info, nvmlDeviceGetPciInfo_v2);
CALLS(struct nvml, device_get_memory_info, nvmlDeviceGetMemoryInfo);
CALLS(struct nvml, device_get_memory_info_v2, nvmlDeviceGetMemoryInfo_v2);
CALLS(struct nvml, device_get_cuda_compute_capability, nvmlDeviceGetCudaComputeCapability);

/* The exporter's queries (some are deprecated in NVML 13, and still resolved as fallbacks). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
SAME_SIZE(struct nvml_utilization, nvmlUtilization_t);
SAME_FIELD(struct nvml_utilization, gpu, nvmlUtilization_t, gpu);
SAME_FIELD(struct nvml_utilization, memory, nvmlUtilization_t, memory);
SAME_TYPE(nvml_event_set, nvmlEventSet_t);
SAME_SIZE(struct nvml_event_data, nvmlEventData_t);
SAME_FIELD(struct nvml_event_data, device, nvmlEventData_t, device);
SAME_FIELD(struct nvml_event_data, event_type, nvmlEventData_t, eventType);
SAME_FIELD(struct nvml_event_data, event_data, nvmlEventData_t, eventData);
SAME_FIELD(struct nvml_event_data, gpu_instance_id, nvmlEventData_t, gpuInstanceId);
SAME_FIELD(struct nvml_event_data, compute_instance_id, nvmlEventData_t, computeInstanceId);
CALLS(struct nvml, device_get_utilization_rates, nvmlDeviceGetUtilizationRates);
CALLS(struct nvml, device_get_temperature, nvmlDeviceGetTemperature);
CALLS(struct nvml, device_get_power_usage, nvmlDeviceGetPowerUsage);
CALLS(struct nvml, device_get_enforced_power_limit, nvmlDeviceGetEnforcedPowerLimit);
CALLS(struct nvml, device_get_total_energy_consumption, nvmlDeviceGetTotalEnergyConsumption);
CALLS(struct nvml, device_get_clock_info, nvmlDeviceGetClockInfo);
CALLS(struct nvml, device_get_clocks_event_reasons, nvmlDeviceGetCurrentClocksThrottleReasons);
CALLS(struct nvml, device_get_supported_event_types, nvmlDeviceGetSupportedEventTypes);
CALLS(struct nvml, device_register_events, nvmlDeviceRegisterEvents);
CALLS(struct nvml, event_set_create, nvmlEventSetCreate);
CALLS(struct nvml, event_set_wait, nvmlEventSetWait_v2);
CALLS(struct nvml, event_set_free, nvmlEventSetFree);
/* Newer headers only (NVML 12.2+ / 13). */
#ifdef nvmlClocksEventReasonGpuIdle
CALLS(struct nvml, device_get_clocks_event_reasons, nvmlDeviceGetCurrentClocksEventReasons);
#endif
#ifdef nvmlTemperature_v1
SAME_CONST(NVML_TEMPERATURE_V1, nvmlTemperature_v1);
SAME_SIZE(struct nvml_temperature, nvmlTemperature_v1_t);
SAME_FIELD(struct nvml_temperature, version, nvmlTemperature_v1_t, version);
SAME_FIELD(struct nvml_temperature, temperature, nvmlTemperature_v1_t, temperature);
CALLS(struct nvml, device_get_temperature_v, nvmlDeviceGetTemperatureV);
#endif
#pragma GCC diagnostic pop
#endif

#ifdef HAVE_NCCL_H
/* The soname sparkctl opens names the major version. */
_Static_assert(NCCL_MAJOR == 2, NCCL_SONAME " is not the library of this nccl.h");
/* nccl.c's get_version, a local variable there. */
CALLS_TYPE(int (*)(int *version), ncclGetVersion);

SAME_SIZE(nccl_unique_id, ncclUniqueId);
SAME_CONST(sizeof(nccl_unique_id), NCCL_UNIQUE_ID_BYTES);
SAME_TYPE(nccl_comm, ncclComm_t);
SAME_SIZE(nccl_result, ncclResult_t);
SAME_CONST(NCCL_SUCCESS, ncclSuccess);
SAME_CONST(NCCL_IN_PROGRESS, ncclInProgress);
/* Our enum values are nccl.h's: ncclDataType_t and ncclRedOp_t. */
SAME_CONST(PERF_INT8, ncclInt8);
SAME_CONST(PERF_UINT8, ncclUint8);
SAME_CONST(PERF_INT32, ncclInt32);
SAME_CONST(PERF_UINT32, ncclUint32);
SAME_CONST(PERF_INT64, ncclInt64);
SAME_CONST(PERF_UINT64, ncclUint64);
SAME_CONST(PERF_HALF, ncclFloat16);
SAME_CONST(PERF_FLOAT, ncclFloat32);
SAME_CONST(PERF_DOUBLE, ncclFloat64);
SAME_CONST(PERF_BFLOAT16, ncclBfloat16);
SAME_CONST(PERF_SUM, ncclSum);
SAME_CONST(PERF_PROD, ncclProd);
SAME_CONST(PERF_MAX, ncclMax);
SAME_CONST(PERF_MIN, ncclMin);
SAME_CONST(PERF_AVG, ncclAvg);

CALLS(struct nccl, get_version, ncclGetVersion);
CALLS(struct nccl, get_unique_id, ncclGetUniqueId);
/*
 * The id goes by value: our struct and nccl.h's are distinct types of the
 * same layout (SAME_SIZE above; one char array each), which the cast check
 * cannot see through, so the rest of the type is checked with the real id.
 */
CALLS_TYPE(nccl_result (*)(nccl_comm *, int, ncclUniqueId, int), ncclCommInitRank);
SAME_TYPE(__typeof__(((struct nccl *)0)->comm_init_rank),
	  nccl_result (*)(nccl_comm *, int, nccl_unique_id, int));
CALLS(struct nccl, comm_destroy, ncclCommDestroy);
CALLS(struct nccl, comm_abort, ncclCommAbort);
CALLS(struct nccl, comm_finalize, ncclCommFinalize);
CALLS(struct nccl, comm_get_async_error, ncclCommGetAsyncError);
CALLS(struct nccl, get_error_string, ncclGetErrorString);
CALLS(struct nccl, get_last_error, ncclGetLastError);
CALLS(struct nccl, all_reduce, ncclAllReduce);
CALLS(struct nccl, all_gather, ncclAllGather);
CALLS(struct nccl, reduce_scatter, ncclReduceScatter);
CALLS(struct nccl, broadcast, ncclBroadcast);
CALLS(struct nccl, reduce, ncclReduce);
CALLS(struct nccl, send, ncclSend);
CALLS(struct nccl, recv, ncclRecv);
CALLS(struct nccl, group_start, ncclGroupStart);
CALLS(struct nccl, group_end, ncclGroupEnd);
CALLS(struct nccl, mem_alloc, ncclMemAlloc);
CALLS(struct nccl, mem_free, ncclMemFree);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
CALLS(struct nccl, alltoall, ncclAlltoAll);
/* As for ncclCommInitRank; the config is compared field by field below. */
CALLS_TYPE(nccl_result (*)(nccl_comm *, int, ncclUniqueId, int, ncclConfig_t *),
	   ncclCommInitRankConfig);
SAME_TYPE(__typeof__(((struct nccl *)0)->comm_init_rank_config),
	  nccl_result (*)(nccl_comm *, int, nccl_unique_id, int, struct nccl_config_v22800 *));
SAME_CONST(ours_NCCL_CONFIG_UNDEF_INT, real_NCCL_CONFIG_UNDEF_INT);
#define SAME_CONFIG(a, b) SAME_FIELD(struct nccl_config_v22800, a, ncclConfig_t, b)
SAME_CONFIG(size, size);
SAME_CONFIG(magic, magic);
SAME_CONFIG(version, version);
SAME_CONFIG(blocking, blocking);
SAME_CONFIG(cga_cluster_size, cgaClusterSize);
SAME_CONFIG(min_ctas, minCTAs);
SAME_CONFIG(max_ctas, maxCTAs);
SAME_CONFIG(net_name, netName);
SAME_CONFIG(split_share, splitShare);
SAME_CONFIG(traffic_class, trafficClass);
SAME_CONFIG(comm_name, commName);
SAME_CONFIG(collnet_enable, collnetEnable);
SAME_CONFIG(cta_policy, CTAPolicy);
SAME_CONFIG(shrink_share, shrinkShare);
SAME_CONFIG(nvls_ctas, nvlsCTAs);
SAME_CONFIG(n_channels_per_net_peer, nChannelsPerNetPeer);
SAME_CONFIG(nvlink_centric_sched, nvlinkCentricSched);
#if NCCL_MINOR == 28
SAME_SIZE(struct nccl_config_v22800, ncclConfig_t);
#endif

/* nccl_config_init() is NCCL_CONFIG_INITIALIZER but for the version: 2.28's layout. */
static int check_nccl_config(void)
{
	ncclConfig_t real = NCCL_CONFIG_INITIALIZER;
	struct nccl_config_v22800 ours;
	/* Up to the last field: the padding after it is nobody's. */
	size_t fields = offsetof(struct nccl_config_v22800, nvlink_centric_sched) + sizeof(int);

	nccl_config_init(&ours);
	real.size = sizeof(ours);
	real.version = NCCL_VERSION(2, 28, 0);
	if (memcmp(&ours, &real, fields) == 0)
		return 0;
	fprintf(stderr, "check-abi: nccl_config_init() is not NCCL_CONFIG_INITIALIZER\n");
	return 1;
}
#endif

/* nccl_version_string() of NCCL_VERSION(x, y, z) is "x.y.z". */
static int check_nccl_version(int code, int x, int y, int z)
{
	struct strbuf got = STRBUF_INIT, want = STRBUF_INIT;
	int bad;

	nccl_version_string(code, &got);
	strbuf_addf(&want, "%d.%d.%d", x, y, z);
	bad = !streq(got.buf, want.buf);
	if (bad)
		fprintf(stderr, "check-abi: NCCL version code %d reads as %s, not %s\n", code,
			got.buf, want.buf);
	strbuf_release(&got);
	strbuf_release(&want);
	return bad;
}
#endif

int main(void)
{
	int failed = 0;

#ifdef HAVE_CUDA_H
	printf("checked against cuda.h of CUDA %d.%d\n", CUDA_VERSION / 1000,
	       CUDA_VERSION % 1000 / 10);
#endif
#ifdef HAVE_NVML_H
	printf("checked against nvml.h, NVML API version %d\n", NVML_API_VERSION);
#else
	printf("no nvml.h: NVML not checked\n");
#endif
#ifdef HAVE_NCCL_H
	printf("checked against nccl.h of NCCL %d.%d.%d\n", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
	/* Both encodings: x*1000+y*100+z up to 2.8, x*10000+y*100+z since 2.9. */
	failed |= check_nccl_version(NCCL_VERSION_CODE, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
	failed |= check_nccl_version(NCCL_VERSION(2, 7, 8), 2, 7, 8);
	failed |= check_nccl_version(NCCL_VERSION(2, 8, 4), 2, 8, 4);
	failed |= check_nccl_version(NCCL_VERSION(2, 9, 6), 2, 9, 6);
	failed |= check_nccl_version(NCCL_VERSION(2, 28, 9), 2, 28, 9);
	failed |= check_nccl_version(NCCL_VERSION(3, 0, 1), 3, 0, 1);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
	failed |= check_nccl_config();
#endif
#else
	printf("no nccl.h: NCCL not checked\n");
#endif
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
