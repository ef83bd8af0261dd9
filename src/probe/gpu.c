#include "sparkctl.h"

#include "lib/dl.h"
#include "lib/elf_note.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "nv/cuda.h"
#include "nv/nccl.h"
#include "nv/nvml.h"
#include "probe/probe_internal.h"

/* How much of libnccl.so.2 is read for its build id. */
#define NCCL_ELF_HEAD_BYTES (64 * 1024)

/* A PCI bus id as NVML ("00000000:01:00.0") or CUDA ("0000:01:00.0") writes it. */
static bool parse_bus_id(const char *s, uint64_t ret[4])
{
	char buf[64];
	char *parts[4];
	size_t n = 0;

	if (!s || strlen(s) >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s", s);
	parts[n++] = buf;
	for (char *p = buf; *p && n < 4; p++) {
		if (*p == ':' || *p == '.') {
			*p = '\0';
			parts[n++] = p + 1;
		}
	}
	if (n != 4)
		return false;
	for (size_t i = 0; i < 4; i++)
		if (parse_u64_hex(parts[i], &ret[i]) < 0)
			return false;
	return true;
}

static bool same_bus_id(const char *a, const char *b)
{
	uint64_t x[4], y[4];

	return parse_bus_id(a, x) && parse_bus_id(b, y) && !memcmp(x, y, sizeof(x));
}

static void probe_nvml_devices(struct probe_ctx *ctx, struct nvml *nvml, struct inv_gpu_info *gi)
{
	unsigned count = 0;
	char version[NVML_DRIVER_VERSION_SIZE], name[NVML_NAME_SIZE], uuid[NVML_UUID_SIZE];
	nvml_return nr;

	if (nvml->system_get_driver_version &&
	    nvml->system_get_driver_version(version, sizeof(version)) == NVML_SUCCESS)
		gi->driver_version = xstrndup(version, sizeof(version) - 1);
	int cuda_version;
	if (nvml->system_get_cuda_driver_version &&
	    nvml->system_get_cuda_driver_version(&cuda_version) == NVML_SUCCESS && cuda_version > 0)
		gi->cuda_driver_version = cuda_version;
	if ((nr = nvml->device_get_count(&count)) != NVML_SUCCESS) {
		inventory_add_problem(ctx->inv, "nvmlDeviceGetCount_v2", "%s",
				      nvml_strerror(nvml, nr));
		return;
	}
	for (unsigned i = 0; i < count && i < 1024; i++) {
		nvml_device dev;
		struct inv_gpu *g = ARRAY_PUSH(gi->gpus, gi->nr_gpus);
		g->index = i;
		g->memory_total_bytes = INV_UNKNOWN;
		g->unified_memory = TRI_UNKNOWN;
		g->cc_major = g->cc_minor = -1;
		g->gpudirect_rdma = g->dma_buf = TRI_UNKNOWN;
		if (nvml->device_get_handle_by_index(i, &dev) != NVML_SUCCESS)
			continue;
		if (nvml->device_get_name &&
		    nvml->device_get_name(dev, name, sizeof(name)) == NVML_SUCCESS)
			g->name = xstrndup(name, sizeof(name) - 1);
		if (nvml->device_get_uuid &&
		    nvml->device_get_uuid(dev, uuid, sizeof(uuid)) == NVML_SUCCESS)
			g->uuid = xstrndup(uuid, sizeof(uuid) - 1);
		struct nvml_pci_info pci;
		memset(&pci, 0, sizeof(pci));
		if (nvml->device_get_pci_info &&
		    nvml->device_get_pci_info(dev, &pci) == NVML_SUCCESS) {
			pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
			g->pci_bus_id = xstrdup(pci.bus_id);
		}
		struct nvml_memory mem;
		if (nvml->device_get_memory_info) {
			nvml_return r = nvml->device_get_memory_info(dev, &mem);
			if (r == NVML_SUCCESS) {
				g->memory_total_bytes =
					mem.total > INT64_MAX ? INT64_MAX : (int64_t)mem.total;
				g->unified_memory = TRI_NO;
			} else if (r == NVML_ERROR_NOT_SUPPORTED) {
				/* An integrated GPU sharing system memory (GB10): no framebuffer.
				 */
				g->unified_memory = TRI_YES;
			}
		}
		int major, minor;
		if (nvml->device_get_cuda_compute_capability &&
		    nvml->device_get_cuda_compute_capability(dev, &major, &minor) == NVML_SUCCESS) {
			g->cc_major = major;
			g->cc_minor = minor;
		}
	}
}

/*
 * The PCI bus id of a CUDA device, written as NVML writes it
 * ("0000000F:01:00.0") so that every GPU in the inventory has one form.
 * From cuDeviceGetPCIBusId, else from the PCI attributes.
 */
static bool cuda_bus_id(const struct cuda *cuda, cu_device dev, char out[32])
{
	char text[64] = "";
	uint64_t v[4];
	int dom, bus, slot;

	if (cuda->device_get_pci_bus_id &&
	    cuda->device_get_pci_bus_id(text, (int)sizeof(text) - 1, dev) == CUDA_SUCCESS &&
	    parse_bus_id(text, v)) {
		snprintf(out, 32, "%08" PRIX64 ":%02" PRIX64 ":%02" PRIX64 ".%" PRIX64, v[0], v[1],
			 v[2], v[3]);
		return true;
	}
	if (cuda->device_get_attribute(&dom, CU_ATTR_PCI_DOMAIN_ID, dev) == CUDA_SUCCESS &&
	    cuda->device_get_attribute(&bus, CU_ATTR_PCI_BUS_ID, dev) == CUDA_SUCCESS &&
	    cuda->device_get_attribute(&slot, CU_ATTR_PCI_DEVICE_ID, dev) == CUDA_SUCCESS &&
	    dom >= 0 && bus >= 0 && slot >= 0) {
		snprintf(out, 32, "%08X:%02X:%02X.0", (unsigned)dom, (unsigned)bus, (unsigned)slot);
		return true;
	}
	return false;
}

static int cuda_attr(const struct cuda *cuda, cu_device dev, int attr)
{
	int v;

	if (cuda->device_get_attribute(&v, attr, dev) != CUDA_SUCCESS)
		return TRI_UNKNOWN;
	return v ? TRI_YES : TRI_NO;
}

/* Add what only CUDA knows (GPUDirect RDMA and DMA-BUF support) to the NVML GPUs. */
static void probe_cuda_devices(struct cuda *cuda, struct inv_gpu_info *gi)
{
	int count = 0, version = 0;

	if (cuda->driver_get_version(&version) == CUDA_SUCCESS && version > 0) {
		gi->cuda.version = xasprintf("%d.%d", version / 1000, version % 1000 / 10);
		if (gi->cuda_driver_version < 0)
			gi->cuda_driver_version = version;
	}
	if (cuda->device_get_count(&count) != CUDA_SUCCESS)
		return;
	for (int i = 0; i < count && i < 1024; i++) {
		cu_device dev;
		char bus[32] = "", name[256] = "";
		struct inv_gpu *g = NULL;

		if (cuda->device_get(&dev, i) != CUDA_SUCCESS)
			continue;
		bool have_bus = cuda_bus_id(cuda, dev, bus);
		for (size_t k = 0; k < gi->nr_gpus && !g && have_bus; k++)
			if (same_bus_id(gi->gpus[k].pci_bus_id, bus))
				g = &gi->gpus[k];
		/* Without a bus id a CUDA device cannot be told from NVML's: add nothing. */
		if (!g && !have_bus && gi->nr_gpus)
			continue;
		if (!g) {
			/* NVML missed it (or is absent): record the CUDA view. */
			g = ARRAY_PUSH(gi->gpus, gi->nr_gpus);
			g->index = (unsigned)(gi->nr_gpus - 1);
			g->memory_total_bytes = INV_UNKNOWN;
			g->unified_memory = TRI_UNKNOWN;
			g->cc_major = g->cc_minor = -1;
			if (cuda->device_get_name &&
			    cuda->device_get_name(name, (int)sizeof(name), dev) == CUDA_SUCCESS)
				g->name = xstrdup(name);
			g->pci_bus_id = have_bus ? xstrdup(bus) : NULL;
		}
		if (g->cc_major < 0) {
			int major, minor;
			if (cuda->device_get_attribute(&major, CU_ATTR_COMPUTE_CAPABILITY_MAJOR,
						       dev) == CUDA_SUCCESS &&
			    cuda->device_get_attribute(&minor, CU_ATTR_COMPUTE_CAPABILITY_MINOR,
						       dev) == CUDA_SUCCESS) {
				g->cc_major = major;
				g->cc_minor = minor;
			}
		}
		g->gpudirect_rdma = cuda_attr(cuda, dev, CU_ATTR_GPU_DIRECT_RDMA_SUPPORTED);
		g->dma_buf = cuda_attr(cuda, dev, CU_ATTR_DMA_BUF_SUPPORTED);
	}
}

void probe_gpus_live(struct probe_ctx *ctx)
{
	struct inv_gpu_info *gi = &ctx->inv->gpu;
	struct strbuf err = STRBUF_INIT;
	struct nvml nvml;
	struct cuda cuda;

	if (nvml_open(&nvml, &err) < 0) {
		gi->nvml.available = TRI_NO;
		gi->nvml.reason = strbuf_detach(&err, NULL);
	} else {
		gi->nvml.available = TRI_YES;
		gi->nvml.path = dl_path(nvml.handle);
		probe_nvml_devices(ctx, &nvml, gi);
		gi->nvml.version = xstrdup_or_null(gi->driver_version);
		nvml_close(&nvml);
	}
	strbuf_reset(&err);
	if (cuda_open(&cuda, false, &err) < 0) {
		gi->cuda.available = TRI_NO;
		gi->cuda.reason = strbuf_detach(&err, NULL);
	} else {
		gi->cuda.available = TRI_YES;
		gi->cuda.path = dl_path(cuda.handle);
		probe_cuda_devices(&cuda, gi);
		cuda_close(&cuda);
	}
	strbuf_release(&err);
}

/*
 * The GNU build id of the NCCL library file at path, or NULL.  Its notes
 * are in its first pages; the library itself is hundreds of megabytes.
 */
static char *nccl_build_id(struct probe_ctx *ctx, const char *path)
{
	struct strbuf head = STRBUF_INIT, id = STRBUF_INIT;
	char *ret = NULL;

	if (path && rootfs_read_head(ctx->root, path, NCCL_ELF_HEAD_BYTES, &head) == 0 &&
	    elf_gnu_build_id(head.buf, head.len, &id) == 0)
		ret = strbuf_detach(&id, NULL);
	strbuf_release(&head);
	strbuf_release(&id);
	return ret;
}

void probe_nccl_live(struct probe_ctx *ctx)
{
	struct inv_system *s = &ctx->inv->sys;
	struct strbuf err = STRBUF_INIT, version = STRBUF_INIT;
	int code;

	if (nccl_probe_version(&code, &s->nccl.path, &err) < 0) {
		s->nccl.available = TRI_NO;
		s->nccl.reason = strbuf_detach(&err, NULL);
	} else {
		s->nccl.available = TRI_YES;
		s->nccl_version_code = code;
		nccl_version_string(code, &version);
		s->nccl.version = strbuf_detach(&version, NULL);
		s->nccl_build_id = nccl_build_id(ctx, s->nccl.path);
	}
	strbuf_release(&err);
	strbuf_release(&version);
}
