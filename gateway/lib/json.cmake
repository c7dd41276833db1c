# gw_json: the descriptor-driven JSON <-> protobuf transcoder and the
# OpenAPI document built from the route table.
add_library(gw_json STATIC
  ${CMAKE_CURRENT_LIST_DIR}/json.c
  ${CMAKE_CURRENT_LIST_DIR}/json_check.c
  ${CMAKE_CURRENT_LIST_DIR}/openapi.c
  ${CMAKE_CURRENT_LIST_DIR}/route_names.c)
target_include_directories(gw_json
  PUBLIC ${CMAKE_CURRENT_LIST_DIR}/../include
  PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(gw_json PUBLIC seo_common seo_proto PkgConfig::JANSSON m)
