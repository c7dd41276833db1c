# gw_http: the gateway's HTTP/1.1 + HTTP/2 front end (gw_http.h).
# Included from gateway/CMakeLists.txt.
add_library(gw_http STATIC
  ${CMAKE_CURRENT_LIST_DIR}/http_server.c
  ${CMAKE_CURRENT_LIST_DIR}/http1.c
  ${CMAKE_CURRENT_LIST_DIR}/http2.c
  ${CMAKE_CURRENT_LIST_DIR}/http_limits.c)
target_include_directories(gw_http
  PUBLIC ${CMAKE_CURRENT_LIST_DIR}/../include
  PRIVATE ${CMAKE_CURRENT_LIST_DIR})
# http_parser (Debian libhttp-parser-dev) ships no pkg-config file.
target_link_libraries(gw_http PUBLIC
  seo_common seo_rpc
  PkgConfig::NGHTTP2 PkgConfig::LIBEVENT PkgConfig::OPENSSL PkgConfig::JANSSON
  http_parser)
