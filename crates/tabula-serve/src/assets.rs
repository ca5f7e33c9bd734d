//! The web app's pages, scripts and style, compiled into the binary: no separate
//! front-end build, no CDN, and nothing served from the disk (so no path can reach
//! outside this list).

/// One embedded file: its name under `/static/`, its media type and its text.
struct Asset {
    name: &'static str,
    mime: &'static str,
    text: &'static str,
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// An entry of [`ASSETS`]: the file `assets/NAME` with its media type.
macro_rules! asset {
    ($name:literal, $mime:expr) => {
        Asset {
            name: $name,
            mime: $mime,
            text: include_str!(concat!("../assets/", $name)),
        }
    };
}

const ASSETS: &[Asset] = &[
    asset!("index.html", HTML),
    asset!("play.html", HTML),
    asset!("mines.html", HTML),
    asset!("train.html", HTML),
    asset!("app.css", CSS),
    asset!("common.js", JS),
    asset!("play.js", JS),
    asset!("mines.js", JS),
    asset!("train.js", JS),
];

/// The media type and text of the embedded file `name`, if there is one.
pub fn get(name: &str) -> Option<(&'static str, &'static str)> {
    ASSETS
        .iter()
        .find(|a| a.name == name)
        .map(|a| (a.mime, a.text))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_embedded_names_are_served() {
        assert!(super::get("play.js").is_some());
        for name in [
            "../Cargo.toml",
            "/etc/passwd",
            "..%2fCargo.toml",
            "",
            "assets/play.js",
        ] {
            assert!(super::get(name).is_none(), "{name}");
        }
    }
}
