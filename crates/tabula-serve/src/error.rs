//! [`ApiError`]: what a request did wrong (a 4xx with a clear message) or what failed
//! on our side (a 5xx), always answered as `{"error": "..."}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// An error answered to an HTTP client.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request is malformed or asks for something illegal (400).
    #[error("{0}")]
    Bad(String),
    /// The thing asked for does not exist here (404).
    #[error("{0}")]
    NotFound(String),
    /// The server is shutting down or a search failed (500).
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    /// A 400 with this message.
    pub fn bad(message: impl std::fmt::Display) -> Self {
        ApiError::Bad(message.to_string())
    }

    fn status(&self) -> StatusCode {
        match self {
            ApiError::Bad(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.to_string() });
        (self.status(), Json(body)).into_response()
    }
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The configuration cannot be used (an unreadable mine model, say).
    #[error("{0}")]
    Config(String),
    /// The server stopped on an I/O error.
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
}
