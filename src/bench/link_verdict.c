#include "sparkctl.h"

#include "bench/link_verdict.h"

const char *link_verdict_name(enum link_verdict v)
{
	switch (v) {
	case LINK_HEALTHY:
		return "healthy";
	case LINK_DEGRADED:
		return "degraded";
	case LINK_BROKEN:
		break;
	}
	return "broken";
}

void link_judgement_init(struct link_judgement *j)
{
	memset(j, 0, sizeof(*j));
	strbuf_init(&j->cause, 0);
}

void link_judgement_release(struct link_judgement *j)
{
	strbuf_release(&j->cause);
}

/* The healthy threshold of one path: the caller's, else a fraction of the line rate. */
static double threshold(const struct link_measure *m, double fraction)
{
	if (m->expect_gbps > 0)
		return m->expect_gbps;
	return m->line_gbps > 0 ? m->line_gbps * fraction : 0;
}

static void cause(struct link_judgement *j, const char *check, const char *fmt, ...)
	ATTR_PRINTF(3, 4);

static void cause(struct link_judgement *j, const char *check, const char *fmt, ...)
{
	va_list ap;

	if (j->cause.len)
		strbuf_addstr(&j->cause, "; ");
	va_start(ap, fmt);
	strbuf_vaddf(&j->cause, fmt, ap);
	va_end(ap);
	if (!j->doctor_check)
		j->doctor_check = check;
}

static void worsen(struct link_judgement *j, enum link_verdict v)
{
	if (v > j->verdict)
		j->verdict = v;
}

/*
 * Judge one path against want.  Broken below 5% of what it should carry:
 * the caller's expectation, else the line rate.
 */
static enum link_verdict judge_one(const struct link_measure *m, double want)
{
	double full = m->expect_gbps > 0 ? m->expect_gbps : m->line_gbps;

	if (!m->ran)
		return LINK_BROKEN;
	if (want <= 0)
		return LINK_HEALTHY; /* nothing to compare with: it ran */
	if (m->gbps < full * LINK_BROKEN_FRACTION)
		return LINK_BROKEN;
	return m->gbps >= want ? LINK_HEALTHY : LINK_DEGRADED;
}

static void mtu_cause(const struct link_measure *m, struct link_judgement *j)
{
	if (m->mtu_a >= 0 && m->mtu_b >= 0 && m->mtu_a != m->mtu_b)
		cause(j, "cluster.mtu", "the MTUs differ (%" PRId64 " and %" PRId64 ")", m->mtu_a,
		      m->mtu_b);
	else if ((m->mtu_a >= 0 && m->mtu_a < 9000) || (m->mtu_b >= 0 && m->mtu_b < 9000))
		cause(j, "net.mtu", "MTU %" PRId64 " (9000 is recommended on the fabric)",
		      m->mtu_a >= 0 && m->mtu_a < 9000 ? m->mtu_a : m->mtu_b);
}

void link_judge_tcp(const struct link_measure *m, struct link_judgement *ret)
{
	double want = threshold(m, LINK_TCP_HEALTHY_FRACTION);

	ret->expected_gbps = want;
	ret->verdict = judge_one(m, want);
	if (ret->verdict == LINK_HEALTHY)
		return;
	if (!m->ran) {
		cause(ret, "cluster.ping",
		      "no TCP traffic passed (addresses, routes, a firewall?)");
		return;
	}
	mtu_cause(m, ret);
	cause(ret, "link.speed",
	      "%.1f Gb/s is below the %.1f Gb/s expected; a degraded link or NIC (PCIe width)",
	      m->gbps, want);
}

void link_judge_rdma(const struct link_measure *twins, size_t n, struct link_judgement *ret)
{
	size_t ran = 0, healthy = 0;
	double want_sum = 0;

	for (size_t i = 0; i < n; i++) {
		double want = threshold(&twins[i], LINK_RDMA_HEALTHY_FRACTION);
		enum link_verdict v = judge_one(&twins[i], want);
		want_sum += want;
		ran += twins[i].ran;
		healthy += v == LINK_HEALTHY;
		worsen(ret, v);
		if (v == LINK_BROKEN && twins[i].ran)
			cause(ret, "link.errors", "%s: %.2f Gb/s, almost nothing passes",
			      twins[i].name, twins[i].gbps);
		else if (v == LINK_DEGRADED &&
			 twins[i].gbps < 0.2 * want / LINK_RDMA_HEALTHY_FRACTION)
			cause(ret, "pci.link",
			      "%s: %.1f Gb/s of the %.1f expected, as from a NIC whose PCIe link "
			      "trained down (about 13 Gb/s while ethtool still says 200G)",
			      twins[i].name, twins[i].gbps, want);
		else if (v == LINK_DEGRADED)
			cause(ret, "link.speed", "%s: %.1f Gb/s, below the %.1f Gb/s expected",
			      twins[i].name, twins[i].gbps, want);
		if (v != LINK_HEALTHY && twins[i].ran)
			mtu_cause(&twins[i], ret);
	}
	ret->expected_gbps = want_sum;
	if (n == 0) {
		ret->verdict = LINK_BROKEN;
		cause(ret, "fabric.active", "no ACTIVE fabric twin pair between the two nodes");
	} else if (ran == 0) {
		cause(ret, "fabric.active", "no twin passed traffic");
	} else if (ran < n || (healthy > 0 && healthy < n)) {
		/* One half works: half the bandwidth, which NCCL would also see. */
		cause(ret, "fabric.twins",
		      "only %zu of %zu twins carry their share: the port runs at half speed or "
		      "less",
		      healthy, n);
	}
	if (ret->verdict == LINK_HEALTHY) {
		strbuf_reset(&ret->cause);
		ret->doctor_check = NULL;
	}
}
