//! Where each target (`core::target`) reaches the ingest server, and the
//! workspace's target settings, `<state dir>/targets.json`:
//!
//! ```json
//! {"paths": {"/app": "."}, "addresses": {"docker": "172.18.0.1"}}
//! ```
//!
//! `paths` maps the paths a program sees to the workspace's; `addresses`
//! names the address of this machine a target reaches it by, where the
//! sidecar's own choice is wrong (a Compose network's gateway, one of
//! several network cards). Read only when trusted (`settings`): a
//! repository cannot make the sidecar listen on an address of its choosing.

use crate::core::target::{PathMap, Target};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

pub const SETTINGS_FILE: &str = "targets.json";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    #[serde(default)]
    paths: BTreeMap<String, String>,
    #[serde(default)]
    addresses: BTreeMap<String, IpAddr>,
}

/// The workspace's target settings as read.
#[derive(Debug, Clone, Default)]
pub struct Targets {
    pub paths: PathMap,
    addresses: BTreeMap<Target, IpAddr>,
}

impl Targets {
    /// The trusted `targets.json`, or no settings (an invalid file is said
    /// on stderr and read as none).
    pub fn load(root: &Path, state_dir: &Path) -> Targets {
        let Some(text) = super::settings::read_trusted(root, state_dir, SETTINGS_FILE) else {
            return Targets::default();
        };
        Targets::parse(&text).unwrap_or_else(|error| {
            eprintln!(
                "debug-sidecar: {} is not valid ({error}); no path map or address applies",
                state_dir.join(SETTINGS_FILE).display()
            );
            Targets::default()
        })
    }

    pub fn parse(text: &str) -> Result<Targets, String> {
        let settings: Settings = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let paths = PathMap::new(
            settings
                .paths
                .iter()
                .map(|(program, workspace)| (program.as_str(), workspace.as_str())),
        )
        .map_err(|e| e.to_string())?;
        let mut addresses = BTreeMap::new();
        for (name, address) in settings.addresses {
            let target = Target::parse(&name)
                .filter(|t| t.beyond_loopback())
                .ok_or_else(|| {
                    format!("`addresses.{name}`: only `docker` and `lan` take an address")
                })?;
            addresses.insert(target, address);
        }
        Ok(Targets { paths, addresses })
    }
}

/// The path map as the settings file holds it now: read again whenever the
/// file changed (the person writes it mid-session), for a server that
/// outlives many edits.
#[derive(Debug)]
pub struct LivePaths {
    root: PathBuf,
    state_dir: PathBuf,
    cached: Mutex<(Option<SystemTime>, PathMap)>,
}

impl LivePaths {
    pub fn new(root: &Path, state_dir: &Path) -> LivePaths {
        LivePaths {
            root: root.to_path_buf(),
            state_dir: state_dir.to_path_buf(),
            cached: Mutex::new((None, PathMap::default())),
        }
    }

    pub fn current(&self) -> PathMap {
        let modified = std::fs::symlink_metadata(self.state_dir.join(SETTINGS_FILE))
            .and_then(|meta| meta.modified())
            .ok();
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if cached.0 != modified {
            let paths = if modified.is_some() {
                Targets::load(&self.root, &self.state_dir).paths
            } else {
                PathMap::default()
            };
            *cached = (modified, paths);
        }
        cached.1.clone()
    }
}

/// How a target's programs reach the listener: the address it listens on
/// and the host its blocks post to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    pub bind: IpAddr,
    pub connect: String,
}

impl Reach {
    fn at(ip: IpAddr) -> Reach {
        Reach {
            bind: ip,
            connect: ip.to_string(),
        }
    }

    fn loopback(connect: &str) -> Reach {
        Reach {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            connect: connect.to_string(),
        }
    }

    /// The URL a block posts to, given the listener's port and the token.
    pub fn url(&self, port: u16, token: &str) -> String {
        let host = match self.connect.parse::<IpAddr>() {
            Ok(IpAddr::V6(v6)) => format!("[{v6}]"),
            _ => self.connect.clone(),
        };
        format!("http://{host}:{port}/ingest/{token}")
    }
}

/// Where `target`'s programs reach this machine, or why that is not known.
pub fn reach(target: Target, settings: &Targets) -> Result<Reach, String> {
    if let Some(address) = settings.addresses.get(&target) {
        return Ok(Reach::at(*address));
    }
    match target {
        Target::Host => Ok(Reach::loopback("127.0.0.1")),
        // The emulator's alias for its host's loopback.
        Target::AndroidEmulator => Ok(Reach::loopback("10.0.2.2")),
        // WSL forwards the Windows side's localhost to its own loopback.
        Target::Wsl => Ok(Reach::loopback("127.0.0.1")),
        // Docker Desktop (macOS, Windows) forwards this name to the host's
        // loopback; on Linux containers reach the bridge's address.
        Target::Docker if !cfg!(target_os = "linux") => Ok(Reach::loopback("host.docker.internal")),
        Target::Docker => {
            let routes = std::fs::read_to_string("/proc/net/route").unwrap_or_default();
            subnet_of(&routes, "docker0")
                .and_then(address_toward)
                .map(Reach::at)
                .ok_or_else(|| {
                    format!(
                        "this machine has no Docker bridge (`docker0`) with an address: set \
                         `addresses.docker` in {SETTINGS_FILE} to the address your containers \
                         reach it by (their network's gateway)"
                    )
                })
        }
        Target::Lan => address_toward(Ipv4Addr::new(192, 0, 2, 1))
            .map(Reach::at)
            .ok_or_else(|| {
                format!(
                    "this machine has no network address with a route beyond it: connect it \
                     to the device's network, or set `addresses.lan` in {SETTINGS_FILE}"
                )
            }),
    }
}

/// The first address of the subnet `interface` reaches directly, from
/// `/proc/net/route` (hexadecimal, in the kernel's byte order).
fn subnet_of(routes: &str, interface: &str) -> Option<Ipv4Addr> {
    routes.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (name, destination, gateway) = (fields.first()?, fields.get(1)?, fields.get(2)?);
        if *name != interface || u32::from_str_radix(gateway, 16).ok()? != 0 {
            return None;
        }
        let destination = u32::from_str_radix(destination, 16).ok()?;
        let network = Ipv4Addr::from(destination.to_le_bytes());
        (!network.is_unspecified()).then(|| Ipv4Addr::from(u32::from(network) + 1))
    })
}

/// This machine's address on the route toward `peer`: a UDP socket
/// "connected" there (no packet is sent) is given it as its source.
fn address_toward(peer: Ipv4Addr) -> Option<IpAddr> {
    let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    socket.connect((peer, 9)).ok()?;
    let local = socket.local_addr().ok()?.ip();
    (!local.is_unspecified() && !local.is_loopback()).then_some(local)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_name_paths_and_addresses() {
        let targets = Targets::parse(
            r#"{"paths": {"/app": ".", "/srv/web": "web"}, "addresses": {"docker": "172.18.0.1"}}"#,
        )
        .unwrap();
        assert_eq!(
            targets.paths.to_workspace("/srv/web/a.js").as_deref(),
            Some("web/a.js")
        );
        let docker = reach(Target::Docker, &targets).unwrap();
        assert_eq!(docker.bind.to_string(), "172.18.0.1");
        assert_eq!(docker.url(9, "t"), "http://172.18.0.1:9/ingest/t");
        for bad in [
            r#"{"addresses": {"wsl": "127.0.0.1"}}"#,
            r#"{"addresses": {"docker": "not-an-ip"}}"#,
            r#"{"paths": {"app": "."}}"#,
            r#"{"paths": {"/app": "../up"}}"#,
            r#"{"listen": "0.0.0.0"}"#,
        ] {
            assert!(Targets::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn loopback_targets_need_no_network() {
        let none = Targets::default();
        let emulator = reach(Target::AndroidEmulator, &none).unwrap();
        assert!(emulator.bind.is_loopback());
        assert_eq!(emulator.url(7, "t"), "http://10.0.2.2:7/ingest/t");
        assert!(reach(Target::Wsl, &none).unwrap().bind.is_loopback());
    }

    #[test]
    fn the_docker_bridge_is_read_from_the_route_table() {
        let routes =
            "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
            eth0\t00000000\t0100A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
            docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n";
        assert_eq!(
            subnet_of(routes, "docker0"),
            Some(Ipv4Addr::new(172, 17, 0, 1))
        );
        assert_eq!(subnet_of(routes, "eth0"), None);
        assert_eq!(subnet_of(routes, "br-1"), None);
    }
}
