//! Each host's page under `docs/hosts/` carries the table of the person's
//! commands as the host profile (core/host.rs) spells them, so the page and
//! the texts the product shows cannot drift. `UPDATE_HOST_DOCS=1` rewrites
//! the tables from the profile.

use debug_sidecar::core::host::HOSTS;
use std::path::Path;

const BEGIN: &str = "<!-- host-profile: begin (generated from src/core/host.rs; UPDATE_HOST_DOCS=1 cargo test --test host_docs) -->\n";
const END: &str = "<!-- host-profile: end -->";

#[test]
fn every_host_page_has_the_profiles_table() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/hosts");
    let update = std::env::var_os("UPDATE_HOST_DOCS").is_some();
    let mut drifted = Vec::new();
    for host in HOSTS {
        let path = docs.join(format!("{}.md", host.slug()));
        let page = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (every host has a page)", path.display()));
        let (Some(start), Some(end)) = (page.find(BEGIN), page.find(END)) else {
            panic!("{} has no host-profile block", path.display());
        };
        let table = host.doc_table();
        if page[start + BEGIN.len()..end] != table {
            if update {
                let page = format!("{}{BEGIN}{table}{}", &page[..start], &page[end..]);
                std::fs::write(&path, page).unwrap();
            } else {
                drifted.push(path.display().to_string());
            }
        }
    }
    assert!(
        drifted.is_empty(),
        "these pages' tables differ from the host profile (UPDATE_HOST_DOCS=1 rewrites them): {drifted:?}"
    );
}

/// The README's host table links every page.
#[test]
fn the_readme_links_every_host_page() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for host in HOSTS {
        let link = format!("docs/hosts/{}.md", host.slug());
        assert!(readme.contains(&link), "the README does not link {link}");
    }
}
