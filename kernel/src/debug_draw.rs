//! Debug draw: the world as a host renderer can show it. One call walks
//! the added bodies, the last step's contacts and the joints, and hands a
//! [`DebugSink`] shapes with world poses, contact points with normals,
//! boxes and joint lines, each with a colour chosen by body, island, split
//! (the large-island splitter's colour, from
//! [`solver_constraints`](PhysicsSystem::solver_constraints)), sleep state
//! or motion type. Not part of the step; it allocates a per-body scratch.

use crate::body::{BodyId, MotionType};
use crate::math::{rotate, Quat, Vec3};
use crate::shape::Shape;
use crate::system::PhysicsSystem;

/// An sRGB colour, `0xRRGGBBAA`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Colour(pub u32);

impl Colour {
    pub const GREY: Colour = Colour(0x80_80_80_ff);
    /// Static bodies, in every colouring.
    pub const STATIC: Colour = Colour(0x55_5b_66_ff);
    pub const SLEEPING: Colour = Colour(0x4a_6f_a5_ff);
    pub const AWAKE: Colour = Colour(0x7f_cf_6f_ff);
    pub const KINEMATIC: Colour = Colour(0xd0_87_70_ff);
    /// Awake bodies in no island (touching nothing) and constraints of
    /// islands the splitter left whole.
    pub const UNGROUPED: Colour = Colour(0xb0_b6_c0_ff);
    /// The non-parallel split (split 31).
    pub const NON_PARALLEL: Colour = Colour(0xff_ff_ff_ff);

    /// The `n`th of 32 distinct colours (Jolt's `Color::sGetDistinctColor`
    /// idea: neighbouring indices get far-apart hues).
    pub fn distinct(n: u32) -> Colour {
        // Golden-ratio steps round the hue circle, at two lightness levels.
        let h = (n as f32 * 0.618_034).fract();
        let l = if n.is_multiple_of(2) { 0.55 } else { 0.68 };
        let s = 0.65f32;
        let c = (1.0 - (2.0 * l - 1.0f32).abs()) * s;
        let hp = h * 6.0;
        let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
        let (r, g, b) = match hp as u32 {
            0 => (c, x, 0.0),
            1 => (x, c, 0.0),
            2 => (0.0, c, x),
            3 => (0.0, x, c),
            4 => (x, 0.0, c),
            _ => (c, 0.0, x),
        };
        let m = l - c / 2.0;
        let byte = |v: f32| ((v + m).clamp(0.0, 1.0) * 255.0).round() as u32;
        Colour(byte(r) << 24 | byte(g) << 16 | byte(b) << 8 | 0xff)
    }
}

/// What colours bodies (contacts and joints are coloured by split under
/// `Split`, else by their island).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DebugColouring {
    /// A distinct colour per body slot.
    Body,
    /// A distinct colour per island of the last step; sleeping bodies
    /// [`Colour::SLEEPING`], awake ones touching nothing
    /// [`Colour::UNGROUPED`].
    #[default]
    Island,
    /// A body's highest split among its constraints in the last step (the
    /// greedy colouring gives a body's constraints the lowest free splits
    /// in turn); [`Colour::UNGROUPED`] in islands that were not split.
    Split,
    /// [`Colour::AWAKE`] or [`Colour::SLEEPING`].
    Sleep,
    /// Static, kinematic, dynamic.
    MotionType,
}

/// What [`PhysicsSystem::debug_draw`] emits. `Default`: shapes coloured by
/// island and joints; no contacts, no boxes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DebugDrawSettings {
    pub shapes: bool,
    pub colouring: DebugColouring,
    /// Every point of the last step's touching manifolds, with its normal.
    pub contacts: bool,
    /// Every body's world bounding box.
    pub aabbs: bool,
    /// A line between each joint's two anchors (they coincide when the
    /// joint holds), and from each anchor to its body's centre.
    pub joints: bool,
}

impl Default for DebugDrawSettings {
    fn default() -> Self {
        Self {
            shapes: true,
            colouring: DebugColouring::Island,
            contacts: false,
            aabbs: false,
            joints: true,
        }
    }
}

/// Where debug draw goes: a host renderer implements `shape` and `line`;
/// contacts and boxes default to lines.
pub trait DebugSink {
    /// A body's shape at its world pose.
    fn shape(
        &mut self,
        body: BodyId,
        shape: &Shape,
        position: Vec3,
        rotation: Quat,
        colour: Colour,
    );
    fn line(&mut self, from: Vec3, to: Vec3, colour: Colour);
    /// A contact point (midway between the surfaces), its manifold's
    /// normal (from body A to B) and separation (negative: penetrating).
    fn contact(&mut self, point: Vec3, normal: Vec3, separation: f32, colour: Colour) {
        let _ = separation;
        self.line(point, point + normal * 0.25, colour);
    }
    fn aabb(&mut self, body: BodyId, min: Vec3, max: Vec3, colour: Colour) {
        let _ = body;
        let corner = |c: u32| {
            Vec3::new(
                if c & 1 != 0 { max.x } else { min.x },
                if c & 2 != 0 { max.y } else { min.y },
                if c & 4 != 0 { max.z } else { min.z },
            )
        };
        for (a, b) in [
            (0, 1),
            (1, 3),
            (3, 2),
            (2, 0),
            (4, 5),
            (5, 7),
            (7, 6),
            (6, 4),
            (0, 4),
            (1, 5),
            (2, 6),
            (3, 7),
        ] {
            self.line(corner(a), corner(b), colour);
        }
    }
}

const NO_ISLAND: u32 = u32::MAX;
const NO_SPLIT: u8 = u8::MAX;

impl PhysicsSystem {
    /// Emits the world into `sink` as `settings` ask, bodies in slot order,
    /// then contacts in body-pair order, then joints in slot order.
    pub fn debug_draw(&self, settings: &DebugDrawSettings, sink: &mut impl DebugSink) {
        let b = &self.bodies;
        let n = b.slots.high_water();
        // Per slot: its island and highest split in the last step.
        let mut placed = vec![(NO_ISLAND, NO_SPLIT); n];
        let mut pair_colour = std::collections::HashMap::new();
        let split_colour = |split: Option<u8>| match split {
            Some(31) => Colour::NON_PARALLEL,
            Some(s) => Colour::distinct(s as u32),
            None => Colour::UNGROUPED,
        };
        for c in self.solver_constraints() {
            for id in [c.body_a, c.body_b].into_iter().flatten() {
                let e = &mut placed[id.index() as usize];
                e.0 = c.island;
                // A body's constraints are all split or none is.
                if let Some(s) = c.split {
                    e.1 = if e.1 == NO_SPLIT { s } else { e.1.max(s) };
                }
            }
            if let (Some(a), Some(bb), None) = (c.body_a, c.body_b, c.joint) {
                let colour = match settings.colouring {
                    DebugColouring::Split => split_colour(c.split),
                    _ => Colour::distinct(c.island),
                };
                pair_colour.insert((a, bb), colour);
            }
        }
        let colour_of = |i: usize| -> Colour {
            let motion = b.motion(i);
            if motion == MotionType::Static {
                return Colour::STATIC;
            }
            let (island, split) = placed[i];
            match settings.colouring {
                DebugColouring::Body => Colour::distinct(i as u32),
                DebugColouring::MotionType if motion == MotionType::Kinematic => Colour::KINEMATIC,
                DebugColouring::MotionType => Colour::AWAKE,
                DebugColouring::Sleep | DebugColouring::Island | DebugColouring::Split
                    if b.is_sleeping(i) =>
                {
                    Colour::SLEEPING
                }
                DebugColouring::Sleep => Colour::AWAKE,
                DebugColouring::Island if island == NO_ISLAND => Colour::UNGROUPED,
                DebugColouring::Island => Colour::distinct(island),
                DebugColouring::Split if split == NO_SPLIT => Colour::UNGROUPED,
                DebugColouring::Split => split_colour(Some(split)),
            }
        };
        for i in (0..n).filter(|&i| b.is_added(i)) {
            let (id, colour) = (b.id_of(i), colour_of(i));
            if settings.shapes {
                sink.shape(id, &b.shape[i], b.pos(i), b.rot(i), colour);
            }
            if settings.aabbs {
                let (min, max) = (b.aabb_min.get(i), b.aabb_max.get(i));
                sink.aabb(id, Vec3::from_array(min), Vec3::from_array(max), colour);
            }
        }
        if settings.contacts {
            for c in self.contacts() {
                let colour = pair_colour
                    .get(&(c.body_a, c.body_b))
                    .copied()
                    .unwrap_or(Colour::UNGROUPED);
                for p in c.points() {
                    sink.contact(p.position, c.normal, p.separation, colour);
                }
            }
        }
        if settings.joints {
            for j in self.joints.live() {
                let Some(s) = &self.joints.settings[j] else {
                    continue;
                };
                let side = |body: Option<BodyId>, anchor: Vec3| match body {
                    Some(id) => {
                        let i = id.index() as usize;
                        (Some(b.pos(i)), b.pos(i) + rotate(b.rot(i), anchor))
                    }
                    None => (None, anchor),
                };
                let (ca, pa) = side(s.body_a, s.frame_a.anchor);
                let (cb, pb) = side(s.body_b, s.frame_b.anchor);
                let colour = Colour(0xeb_cb_8b_ff);
                sink.line(pa, pb, colour);
                for (centre, anchor) in [(ca, pa), (cb, pb)] {
                    if let Some(c) = centre {
                        sink.line(c, anchor, colour);
                    }
                }
            }
        }
    }
}
