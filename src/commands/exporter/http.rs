//! The exporter's HTTP side: `/metrics` in the format the scraper asks for
//! in `Accept` (OpenMetrics, else the Prometheus text format), and a small
//! page at `/` that says what this is. Every answer is a document rendered
//! before the scrape came, so it costs a copy of a reference, never a
//! reading of ZooKeeper. What bounds the connections is [`crate::serve`]'s.

use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;

use crate::output::prometheus::Exposition;
use crate::serve::{self, Limits};

/// The documents a scrape is served, in both formats.
#[derive(Clone, Default)]
pub(super) struct Published {
    pub text: Bytes,
    pub open_metrics: Bytes,
}

/// The page at `/`.
const INDEX: &str = "<!DOCTYPE html>\n<html><head><title>zklock exporter</title></head><body>\n\
<h1>zklock exporter</h1>\n<p>Metrics of the ZooKeeper locks under one path, kept current \
from a live watch: <a href=\"/metrics\">/metrics</a>.</p>\n</body></html>\n";

/// Answers every connection on `listener` within `limits` until dropped.
pub(super) async fn serve(listener: TcpListener, limits: Limits, published: Arc<Mutex<Published>>) {
    serve::serve(listener, limits, move |request| {
        respond(request, &published)
    })
    .await;
}

fn respond(request: &Request<Incoming>, published: &Mutex<Published>) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
    }
    match request.uri().path() {
        "/metrics" => {
            let format = asked_format(request);
            let published = published.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let body = match format {
                Exposition::Text => published.text,
                Exposition::OpenMetrics => published.open_metrics,
            };
            answer(StatusCode::OK, format.content_type(), body)
        }
        "/" => answer(
            StatusCode::OK,
            "text/html; charset=utf-8",
            Bytes::from_static(INDEX.as_bytes()),
        ),
        _ => plain(
            StatusCode::NOT_FOUND,
            "not found: the metrics are at /metrics\n",
        ),
    }
}

/// OpenMetrics when the scraper lists it in `Accept` (Prometheus does,
/// first), else the text format every scraper reads.
fn asked_format(request: &Request<Incoming>) -> Exposition {
    let accept = request
        .headers()
        .get_all(ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok());
    let open_metrics = accept
        .flat_map(|value| value.split(','))
        .any(|choice| choice.trim().starts_with("application/openmetrics-text"));
    if open_metrics {
        Exposition::OpenMetrics
    } else {
        Exposition::Text
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    answer(
        status,
        "text/plain; charset=utf-8",
        Bytes::from_static(text.as_bytes()),
    )
}

fn answer(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
