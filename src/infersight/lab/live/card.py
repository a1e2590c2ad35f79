"""The lab's modelled GPU card: what dcgm-exporter would report of it, and the card's faults.

No GPU is here. The card's state (clock, temperature, framebuffer, Xid) is modelled; how busy
it is comes from the engine on it: the GPU stand-in's batches (`gpu_standin.py`), or a real
vLLM engine's running requests (`card_follower.py`). dcgm-exporter's names and units are the
real ones, so the catalog reads the card as it reads production.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Gauge

FB_TOTAL_MIB = 81559  # an 80 GB card as dcgm-exporter reports it
FB_RESERVED_MIB = 559
NOMINAL_SM_MHZ = 1980.0
XID_FALLEN_OFF_BUS = 79
LEAK_MIB_PER_S = 60.0  # fills the card's ~8 GiB of headroom in a little over 2 minutes
#: the faults that change the card alone
CARD_FAULTS = ("gpu-clock-drop", "gpu-xid", "gpu-vram-leak")


@dataclass
class CardState:
    """What the modelled GPU is doing; faults change it."""

    sm_clock: float = NOMINAL_SM_MHZ
    temp_c: float = 62.0
    clock_event_reasons: int = 0
    xid: int = 0
    gone: bool = False
    weights_mib: float = 14_800.0  # model weights
    kv_pool_mib: float = 58_000.0  # preallocated KV-cache blocks (gpu_memory_utilization 0.9)
    leaked_mib: float = 0.0
    leak_mib_per_s: float = 0.0
    busy_s: float = 0.0  # executor busy time, accumulated
    util: float = 0.0  # 0-100, over the last second
    faults: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def fb_used_mib(self) -> float:
        used = self.weights_mib + self.kv_pool_mib + self.leaked_mib
        return min(used, FB_TOTAL_MIB - FB_RESERVED_MIB)

    @property
    def out_of_memory(self) -> bool:
        return self.weights_mib + self.kv_pool_mib + self.leaked_mib >= (
            FB_TOTAL_MIB - FB_RESERVED_MIB
        )


class Card:
    """The card's state and its dcgm-exporter families in `registry`."""

    def __init__(self, name: str) -> None:
        self.state = CardState()
        self.registry = CollectorRegistry()
        labels = ("gpu", "UUID", "device", "modelName", "Hostname")
        self._labels = ("0", f"GPU-lab-{name}", "nvidia0", "NVIDIA H100 80GB HBM3 (modelled)", name)

        def g(metric: str, doc: str) -> Gauge:
            return Gauge(metric, doc, labels, registry=self.registry)

        self.g_util = g("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).")
        self.g_sm = g("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).")
        self.g_temp = g("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).")
        self.g_power = g("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).")
        self.g_fb_used = g("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).")
        self.g_fb_free = g("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).")
        self.g_fb_reserved = g("DCGM_FI_DEV_FB_RESERVED", "Framebuffer memory reserved (in MiB).")
        self.g_reasons = g("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "Current clock event reasons.")
        self._fields = (
            self.g_util,
            self.g_sm,
            self.g_temp,
            self.g_power,
            self.g_fb_used,
            self.g_fb_free,
            self.g_fb_reserved,
            self.g_reasons,
        )
        self.g_xid = g("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.").labels(
            *self._labels
        )

    @property
    def clock_ratio(self) -> float:
        return self.state.sm_clock / NOMINAL_SM_MHZ

    def advance(self, util: float, seconds: float) -> None:
        """One tick: the busy share over the last `seconds`, the leak, the temperature."""
        c = self.state
        c.util = max(0.0, min(100.0, util))
        c.leaked_mib += c.leak_mib_per_s * seconds
        if "gpu-clock-drop" not in c.faults:  # throttled: held at its hot reading
            target = 55.0 + 0.25 * c.util
            c.temp_c += 0.2 * (target - c.temp_c)
        self.publish()

    def publish(self) -> None:
        c = self.state
        self.g_xid.set(c.xid)
        if c.gone:  # the GPU fell off the bus: dcgm-exporter reads no field of it any more
            for gauge in self._fields:
                with contextlib.suppress(KeyError):
                    gauge.remove(*self._labels)
            return
        self.g_util.labels(*self._labels).set(round(c.util))
        self.g_sm.labels(*self._labels).set(round(c.sm_clock))
        self.g_temp.labels(*self._labels).set(round(c.temp_c))
        power = 90.0 + 3.1 * c.util * self.clock_ratio
        self.g_power.labels(*self._labels).set(round(power, 1))
        used = c.fb_used_mib
        self.g_fb_used.labels(*self._labels).set(round(used))
        self.g_fb_free.labels(*self._labels).set(round(FB_TOTAL_MIB - FB_RESERVED_MIB - used))
        self.g_fb_reserved.labels(*self._labels).set(FB_RESERVED_MIB)
        self.g_reasons.labels(*self._labels).set(c.clock_event_reasons)

    def apply(self, name: str, params: dict[str, Any]) -> None:
        """A card fault (`CARD_FAULTS`); ValueError for another name or a bad parameter."""
        c = self.state
        if name == "gpu-clock-drop":
            ratio = float(params.get("ratio", 0.45))
            if not 0.05 <= ratio < 1:
                raise ValueError("ratio must be in [0.05, 1)")
            c.sm_clock = NOMINAL_SM_MHZ * ratio
            c.temp_c = float(params.get("temp_c", 91.0))
            c.clock_event_reasons = 0x20 | 0x40  # sw_thermal | hw_thermal slowdown
        elif name == "gpu-xid":
            c.xid, c.gone = XID_FALLEN_OFF_BUS, True
        elif name == "gpu-vram-leak":
            c.leak_mib_per_s = float(params.get("mib_per_s", LEAK_MIB_PER_S))
        else:
            raise ValueError(f"unknown fault {name!r} for a modelled card")
        c.faults[name] = params
        self.publish()

    def clear(self) -> None:
        c = self.state
        c.sm_clock, c.clock_event_reasons = NOMINAL_SM_MHZ, 0
        c.xid, c.gone = 0, False
        c.leak_mib_per_s, c.leaked_mib = 0.0, 0.0
        c.faults.clear()
        self.publish()
