"""`jaxwrap.modular`: robots composed of parameterized modules (after Darwin2K's
``configuration``), with every module parameter a differentiable design variable.

Build a `Configuration` with `ConfigurationBuilder` from the module catalog (bases,
joints, links, tools); the operations are free functions taking the configuration first
(``jw.modular.compute_cg(config, q)``), named after Darwin2K's methods in snake_case;
`to_robot_model` gives the mechanism as a `jaxwrap.RobotModel`, `to_urdf` as a URDF.
See docs/modular.md.
"""

from ._catalog import (
    ElbowTube as ElbowTube,
    FixedBase as FixedBase,
    FreeFlyingBase as FreeFlyingBase,
    HollowTube as HollowTube,
    PlanarBase as PlanarBase,
    SimpleTool as SimpleTool,
    TeeTube as TeeTube,
)
from ._codesign import (
    footprint_shape as footprint_shape,
    joint_pulley as joint_pulley,
    module_frame as module_frame,
    module_point as module_point,
)
from ._components import (
    AbstractComponent as AbstractComponent,
    DeflectionLimit as DeflectionLimit,
    JointLimitMargin as JointLimitMargin,
    StabilityLimit as StabilityLimit,
    add_cfg_component as add_cfg_component,
    remove_cfg_component as remove_cfg_component,
    update_components as update_components,
)
from ._configuration import (
    ALL as ALL,
    BASE_ONLY as BASE_ONLY,
    CHAINS_ONLY as CHAINS_ONLY,
    Configuration as Configuration,
    ConfigurationBuilder as ConfigurationBuilder,
    MotionMode as MotionMode,
    base_is_mobile as base_is_mobile,
    clear_lock as clear_lock,
    get_cost_vector as get_cost_vector,
    get_motion_mode as get_motion_mode,
    lock_mask as lock_mask,
    set_base_cost as set_base_cost,
    set_chain_cost as set_chain_cost,
    set_lock_from_endpoint as set_lock_from_endpoint,
    set_motion_mode as set_motion_mode,
    set_tip_load as set_tip_load,
    with_params as with_params,
    with_twist as with_twist,
)
from ._deflection import compute_deflections as compute_deflections, end_point_deflections as end_point_deflections
from ._design import (
    DesignResult as DesignResult,
    DesignSpace as DesignSpace,
    best_design as best_design,
    design_search as design_search,
)
from ._graph import Attachment as Attachment, Chain as Chain
from ._joints import (
    AbstractJointModule as AbstractJointModule,
    ElbowRevolute as ElbowRevolute,
    InlineRevolute as InlineRevolute,
    PrismaticJoint as PrismaticJoint,
    RightAngleRevolute as RightAngleRevolute,
)
from ._kinematics import (
    ConfigurationPose as ConfigurationPose,
    body_mass_properties as body_mass_properties,
    chain_dofs as chain_dofs,
    compute_cg as compute_cg,
    compute_chain_jacobian as compute_chain_jacobian,
    compute_jacobian as compute_jacobian,
    compute_mass as compute_mass,
    end_point_poses as end_point_poses,
    module_placements as module_placements,
    neutral as neutral,
    to_robot_model as to_robot_model,
    update_pose as update_pose,
)
from ._metrics import (
    compute_energy_stability as compute_energy_stability,
    compute_limit_gradient as compute_limit_gradient,
    cont_torque as cont_torque,
    energy_stability as energy_stability,
    get_max_velocity_vector as get_max_velocity_vector,
    is_passive as is_passive,
    limit_gradient as limit_gradient,
    max_torque as max_torque,
    max_vel as max_vel,
    power as power,
    support_polygon as support_polygon,
)
from ._module import AbstractModule as AbstractModule, MassProperties as MassProperties, ParamSpec as ParamSpec
from ._payload import (
    Payload as Payload,
    align_connector_to_pose as align_connector_to_pose,
    remove_payload as remove_payload,
    set_payload as set_payload,
)
from ._urdf import rotation_to_rpy as rotation_to_rpy, to_urdf as to_urdf
