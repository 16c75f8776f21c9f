"""Running on Ascend NPUs through TF Adapter: TF1 sessions and the TF2 device.

- :func:`session_config` builds the ``tf.compat.v1.ConfigProto`` for a TF1 session.
- :func:`open_device` opens npu_device (TF2) as the default device.

Both take the same typed options, named exactly as TF Adapter's keys, and check every value
before TensorFlow or the adapter sees it (:data:`OPTIONS` lists them). Importing this
package does not import TensorFlow.
"""
from .device import open_device
from .options import OPTIONS, Option, validate
from .session import session_config

__all__ = ["session_config", "open_device", "OPTIONS", "Option", "validate"]
