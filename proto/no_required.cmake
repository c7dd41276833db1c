# Fails when a .proto file under SRC declares a `required` field: every
# field is optional, so that one can be added or retired without breaking
# a peer (docs/decisions.md; always-present fields declare a [default]).
# Run as: cmake -DSRC=<source dir> -P no_required.cmake
file(GLOB_RECURSE protos ${SRC}/*.proto)
set(found "")
foreach(p ${protos})
  file(RELATIVE_PATH rel ${SRC} ${p})
  if(rel MATCHES "^build")
    continue()
  endif()
  file(STRINGS ${p} lines REGEX "^[ \t]*required[ \t]")
  foreach(l ${lines})
    string(STRIP "${l}" l)
    list(APPEND found "${rel}: ${l}")
  endforeach()
endforeach()
if(found)
  string(REPLACE ";" "\n" found "${found}")
  message(FATAL_ERROR "required fields (new proto fields are optional):\n${found}")
endif()
