#include <stdlib.h>
#include <string.h>

#include "fake_gpu.h"

static const struct fake_gpu gb10 = {
	.name = "NVIDIA GB10",
	.uuid = "GPU-a1b2c3d4-0b10-4f00-8000-00000f010000",
	.domain = 0xf,
	.bus = 0x01,
	.pci_device_id = 0x2e12,
	.pci_subsystem_id = 0x21c110de,
	.memory_bytes = 0,
	.cc_major = 12,
	.cc_minor = 1,
	.gpudirect_rdma = 0,
	.dma_buf = 0,
	.util_gpu = 37,
	.util_memory = 0,
	.temperature = 45,
	.power_mw = 11250,
	.power_limit_mw = 0,
	.energy_mj = 123456789,
	.clock_mhz = { 2418, 2418, 0, 1950 },
	.clock_reasons = 0x1, /* idle */
};

/* One H100 SXM5 at bus B (a DGX H100 layout); rdma is both GPUDirect RDMA and DMA-BUF. */
#define H100(b, rdma)                                                                              \
	{                                                                                          \
		.name = "NVIDIA H100 80GB HBM3",                                                   \
		.uuid = "GPU-e5f6a7b8-0100-4800-8000-000000" #b "0000", .bus = 0x##b,              \
		.pci_device_id = 0x2330, .pci_subsystem_id = 0x16c110de,                           \
		.memory_bytes = 85520809984ULL, .cc_major = 9, .cc_minor = 0,                      \
		.gpudirect_rdma = (rdma), .dma_buf = (rdma), .util_gpu = 50, .util_memory = 20,    \
		.temperature = 40, .power_mw = 300000, .power_limit_mw = 700000,                   \
		.energy_mj = 5000000, .clock_mhz = { 1980, 1980, 2619, 1545 },                     \
		.clock_reasons = 0x4, /* software power cap */                                     \
	}

static const struct fake_gpu h100[] = {
	H100(1b, 1), H100(43, 1), H100(52, 1), H100(61, 1),
	H100(9d, 1), H100(c3, 1), H100(d1, 1), H100(df, 1),
};

/* As h100, but the sixth GPU (NVML index 5) supports neither. */
static const struct fake_gpu h100_mixed[] = {
	H100(1b, 1), H100(43, 1), H100(52, 1), H100(61, 1),
	H100(9d, 1), H100(c3, 0), H100(d1, 1), H100(df, 1),
};

static const struct fake_gpu *const gb10_only[] = { &gb10 };

static const struct fake_gpu *const h100_nvml[] = {
	&h100[0], &h100[1], &h100[2], &h100[3], &h100[4], &h100[5], &h100[6], &h100[7],
};

/* CUDA ordinal i is NVML index order[i]: no two agree, so pairing by index fails. */
static const struct fake_gpu *const h100_cuda[] = {
	&h100[3], &h100[6], &h100[0], &h100[5], &h100[1], &h100[7], &h100[4], &h100[2],
};

static const struct fake_gpu *const h100_mixed_nvml[] = {
	&h100_mixed[0], &h100_mixed[1], &h100_mixed[2], &h100_mixed[3],
	&h100_mixed[4], &h100_mixed[5], &h100_mixed[6], &h100_mixed[7],
};

static const struct fake_gpu *const h100_mixed_cuda[] = {
	&h100_mixed[3], &h100_mixed[6], &h100_mixed[0], &h100_mixed[5],
	&h100_mixed[1], &h100_mixed[7], &h100_mixed[4], &h100_mixed[2],
};

#define GPUS(a) (a), sizeof(a) / sizeof((a)[0])

static const struct fake_machine machines[] = {
	{ "gb10", false, false, "580.95.05", 13000, GPUS(gb10_only), GPUS(gb10_only) },
	{ "h100x8", false, false, "550.127.05", 12040, GPUS(h100_nvml), GPUS(h100_cuda) },
	{ "h100x8-mixed", false, false, "550.127.05", 12040, GPUS(h100_mixed_nvml),
	  GPUS(h100_mixed_cuda) },
	/* NVML never starts: the CUDA view is all there is of the GPU. */
	{ "nvml-init-fails", true, false, "580.95.05", 13000, NULL, 0, GPUS(gb10_only) },
	{ "cuda-no-device", false, true, "580.95.05", 13000, GPUS(gb10_only), NULL, 0 },
};

const struct fake_machine *fake_machine_from_env(void)
{
	const char *profile = getenv("SPARKCTL_FAKE_GPU");

	if (!profile)
		profile = "gb10";
	for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++)
		if (strcmp(machines[i].profile, profile) == 0)
			return &machines[i];
	return NULL;
}
