"""One module per wire API, each exposing ``async def produce(model, context, options, out)``.

They are imported on first use only (see ``picode.ai.stream.PROVIDER_MODULES``).
"""

from picode.ai import lazy_sdk, sliced_module, type_imports

# Before any provider module imports its SDK: load only the SDK modules a request uses.
lazy_sdk.install()
type_imports.install()
sliced_module.install()
