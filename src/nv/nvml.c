#include "sparkctl.h"

#include <dlfcn.h>

#include "lib/dl.h"
#include "nv/nvml.h"

int nvml_open(struct nvml *nvml, struct strbuf *err)
{
	const struct dl_symbol syms[] = {
		{ { "nvmlInit_v2", "nvmlInit" }, (void **)&nvml->init, true },
		{ { "nvmlShutdown" }, (void **)&nvml->shutdown, true },
		{ { "nvmlErrorString" }, (void **)&nvml->error_string, false },
		{ { "nvmlSystemGetDriverVersion" },
		  (void **)&nvml->system_get_driver_version,
		  false },
		{ { "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion" },
		  (void **)&nvml->system_get_cuda_driver_version,
		  false },
		{ { "nvmlDeviceGetCount_v2" }, (void **)&nvml->device_get_count, true },
		{ { "nvmlDeviceGetHandleByIndex_v2" },
		  (void **)&nvml->device_get_handle_by_index,
		  true },
		{ { "nvmlDeviceGetName" }, (void **)&nvml->device_get_name, false },
		{ { "nvmlDeviceGetUUID" }, (void **)&nvml->device_get_uuid, false },
		{ { "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2" },
		  (void **)&nvml->device_get_pci_info,
		  false },
		{ { "nvmlDeviceGetMemoryInfo" }, (void **)&nvml->device_get_memory_info, false },
		{ { "nvmlDeviceGetMemoryInfo_v2" },
		  (void **)&nvml->device_get_memory_info_v2,
		  false },
		{ { "nvmlDeviceGetCudaComputeCapability" },
		  (void **)&nvml->device_get_cuda_compute_capability,
		  false },
		{ { "nvmlDeviceGetUtilizationRates" },
		  (void **)&nvml->device_get_utilization_rates,
		  false },
		/* nvmlDeviceGetTemperature is deprecated since NVML 13: the new one first. */
		{ { "nvmlDeviceGetTemperatureV" },
		  (void **)&nvml->device_get_temperature_v,
		  false },
		{ { "nvmlDeviceGetTemperature" }, (void **)&nvml->device_get_temperature, false },
		{ { "nvmlDeviceGetPowerUsage" }, (void **)&nvml->device_get_power_usage, false },
		{ { "nvmlDeviceGetEnforcedPowerLimit" },
		  (void **)&nvml->device_get_enforced_power_limit,
		  false },
		{ { "nvmlDeviceGetTotalEnergyConsumption" },
		  (void **)&nvml->device_get_total_energy_consumption,
		  false },
		{ { "nvmlDeviceGetClockInfo" }, (void **)&nvml->device_get_clock_info, false },
		{ { "nvmlDeviceGetCurrentClocksEventReasons",
		    "nvmlDeviceGetCurrentClocksThrottleReasons" },
		  (void **)&nvml->device_get_clocks_event_reasons,
		  false },
		{ { "nvmlDeviceGetSupportedEventTypes" },
		  (void **)&nvml->device_get_supported_event_types,
		  false },
		{ { "nvmlDeviceRegisterEvents" }, (void **)&nvml->device_register_events, false },
		{ { "nvmlEventSetCreate" }, (void **)&nvml->event_set_create, false },
		{ { "nvmlEventSetWait_v2" }, (void **)&nvml->event_set_wait, false },
		{ { "nvmlEventSetFree" }, (void **)&nvml->event_set_free, false },
	};
	int r;

	memset(nvml, 0, sizeof(*nvml));
	r = dl_open(NVML_SONAME, &nvml->handle, err);
	if (r < 0)
		return r;
	r = dl_resolve(nvml->handle, syms, ARRAY_SIZE(syms), err);
	if (r < 0)
		goto fail;
	nvml_return nr = nvml->init();
	if (nr != NVML_SUCCESS) {
		strbuf_addf(err, "nvmlInit failed: %s", nvml_strerror(nvml, nr));
		r = -EIO;
		goto fail;
	}
	return 0;
fail:
	dlclose(nvml->handle);
	memset(nvml, 0, sizeof(*nvml));
	return r;
}

void nvml_close(struct nvml *nvml)
{
	if (!nvml->handle)
		return;
	if (nvml->shutdown)
		nvml->shutdown();
	dlclose(nvml->handle);
	memset(nvml, 0, sizeof(*nvml));
}

const char *nvml_strerror(const struct nvml *nvml, nvml_return r)
{
	const char *s = nvml->error_string ? nvml->error_string(r) : NULL;
	return s ? s : "unknown NVML error";
}
