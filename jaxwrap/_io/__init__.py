"""Model files: URDF (through yourdfpy; MJCF and OpenSim readers follow the same layout).

Readers return NumPy-level specifications (`jaxwrap._kinematics._spec.ModelSpec`), so the
model classes can use them without importing anything above themselves; the public
loaders (`jaxwrap.load_urdf`) live in `_load.py`.
"""
