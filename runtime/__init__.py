"""jaxlib's Python API (``xla_client``, jax's ``xla_bridge``, ``plugin_support``, the kernel
registrations), implemented on jaxlib's PJRT bindings.

Public modules mirror jaxlib's names so that code written against that API switches by
changing one import::

    from runtime import xla_client      # instead of: from jaxlib import xla_client
    from runtime import xla_bridge      # instead of: from jax._src import xla_bridge
"""

__version__ = "0.1.0"
