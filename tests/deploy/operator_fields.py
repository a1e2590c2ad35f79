"""The fields of the Prometheus Operator's custom resources that the manifests use, as JSON
Schema, written from the operator's API types (pkg/apis/monitoring/v1 `ServiceMonitorSpec`,
`Endpoint`; v1alpha1 `AlertmanagerConfigSpec`, `Route`, `Receiver`, `WebhookConfig`,
`HTTPConfig`; v1 `SafeAuthorization`), read from prometheus-operator's sources when its
VERSION file said 0.84.1.

The Kubernetes schemas (kubernetes-validate) do not hold custom resources, and the operator's
CRDs cannot be fetched where the tests run. So each object here allows only the keys the
types declare at the levels the manifests write (a misspelt key is refused, as the API server
would prune or refuse it), with their JSON types and the required ones."""

from __future__ import annotations

from typing import Any


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(required),
        "additionalProperties": False,
    }


_STR = {"type": "string"}
_STRS = {"type": "array", "items": _STR}
_BOOL = {"type": "boolean"}
_LABELS = {"type": "object", "additionalProperties": _STR}
_OPEN = {"type": "object"}  # a level the manifests do not write: its keys are not checked

_SECRET_KEY = _obj({"name": _STR, "key": _STR, "optional": _BOOL}, ("key",))
_SAFE_AUTHORIZATION = _obj(
    {
        "type": {"type": "string", "not": {"pattern": "^[Bb][Aa][Ss][Ii][Cc]$"}},
        "credentials": _SECRET_KEY,
    }
)
_LABEL_SELECTOR = _obj({"matchLabels": _LABELS, "matchExpressions": {"type": "array"}})
_METADATA = _obj(
    {"name": _STR, "namespace": _STR, "labels": _LABELS, "annotations": _LABELS}, ("name",)
)

_ENDPOINT = _obj(
    {
        **{k: _STR for k in ("port", "path", "scheme", "interval", "scrapeTimeout")},
        **{k: _STR for k in ("bearerTokenFile", "proxyUrl")},
        "targetPort": {"type": ["string", "integer"]},
        "params": _OPEN,
        "tlsConfig": _OPEN,
        "bearerTokenSecret": _SECRET_KEY,
        "authorization": _SAFE_AUTHORIZATION,
        "basicAuth": _OPEN,
        "oauth2": _OPEN,
        **{k: _BOOL for k in ("honorLabels", "honorTimestamps", "followRedirects")},
        **{k: _BOOL for k in ("enableHttp2", "filterRunning")},
        "metricRelabelings": {"type": "array"},
        "relabelings": {"type": "array"},
    }
)


def _resource(api_version: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return _obj(
        {
            "apiVersion": {"const": api_version},
            "kind": {"const": kind},
            "metadata": _METADATA,
            "spec": spec,
        },
        ("apiVersion", "kind", "metadata", "spec"),
    )


SERVICE_MONITOR = _resource(
    "monitoring.coreos.com/v1",
    "ServiceMonitor",
    _obj(
        {
            "jobLabel": _STR,
            "targetLabels": _STRS,
            "podTargetLabels": _STRS,
            "endpoints": {"type": "array", "items": _ENDPOINT},
            "selector": _LABEL_SELECTOR,
            "namespaceSelector": _obj({"any": _BOOL, "matchNames": _STRS}),
            **{k: {"type": "integer"} for k in ("sampleLimit", "targetLimit", "labelLimit")},
            "attachMetadata": _OPEN,
            "scrapeClass": _STR,
        },
        ("selector",),
    ),
)

_HTTP_CONFIG = _obj(
    {
        "authorization": _SAFE_AUTHORIZATION,
        "basicAuth": _OPEN,
        "oauth2": _OPEN,
        "bearerTokenSecret": _SECRET_KEY,
        "tlsConfig": _OPEN,
        "proxyURL": _STR,
        "followRedirects": _BOOL,
    }
)
_WEBHOOK = _obj(
    {
        "sendResolved": _BOOL,
        "url": _STR,
        "urlSecret": _SECRET_KEY,
        "httpConfig": _HTTP_CONFIG,
        "maxAlerts": {"type": "integer", "minimum": 0},
        "timeout": _STR,
    }
)
_MATCHER = _obj(
    {"name": _STR, "value": _STR, "matchType": {"enum": ["=", "!=", "=~", "!~"]}}, ("name",)
)
_ROUTE = _obj(
    {
        "receiver": _STR,
        "groupBy": _STRS,
        **{k: _STR for k in ("groupWait", "groupInterval", "repeatInterval")},
        "matchers": {"type": "array", "items": _MATCHER},
        "continue": _BOOL,
        "routes": {"type": "array"},
        "muteTimeIntervals": _STRS,
        "activeTimeIntervals": _STRS,
    }
)
_RECEIVER = _obj(
    {
        "name": {"type": "string", "minLength": 1},
        "webhookConfigs": {"type": "array", "items": _WEBHOOK},
    },
    ("name",),
)

ALERTMANAGER_CONFIG = _resource(
    "monitoring.coreos.com/v1alpha1",
    "AlertmanagerConfig",
    _obj(
        {
            "route": _ROUTE,
            "receivers": {"type": "array", "items": _RECEIVER},
            "inhibitRules": {"type": "array"},
            "muteTimeIntervals": {"type": "array"},
        }
    ),
)

SCHEMAS = {"ServiceMonitor": SERVICE_MONITOR, "AlertmanagerConfig": ALERTMANAGER_CONFIG}
