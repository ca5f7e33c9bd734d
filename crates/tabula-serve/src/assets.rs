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

const ASSETS: &[Asset] = &[
    Asset {
        name: "index.html",
        mime: HTML,
        text: include_str!("../assets/index.html"),
    },
    Asset {
        name: "play.html",
        mime: HTML,
        text: include_str!("../assets/play.html"),
    },
    Asset {
        name: "mines.html",
        mime: HTML,
        text: include_str!("../assets/mines.html"),
    },
    Asset {
        name: "train.html",
        mime: HTML,
        text: include_str!("../assets/train.html"),
    },
    Asset {
        name: "app.css",
        mime: CSS,
        text: include_str!("../assets/app.css"),
    },
    Asset {
        name: "common.js",
        mime: JS,
        text: include_str!("../assets/common.js"),
    },
    Asset {
        name: "play.js",
        mime: JS,
        text: include_str!("../assets/play.js"),
    },
    Asset {
        name: "mines.js",
        mime: JS,
        text: include_str!("../assets/mines.js"),
    },
    Asset {
        name: "train.js",
        mime: JS,
        text: include_str!("../assets/train.js"),
    },
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
